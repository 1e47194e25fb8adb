/**
 * "Cost calculator" card: a model (suggested from the priced ones), an optional provider (which
 * also matches dated model names the way real traffic does), token counts, and the cost with its
 * breakdown, computed by the server with the same integer arithmetic that bills requests.
 */
import { useState } from 'preact/hooks';
import { useForm } from '../../components/use-form.js';
import { api } from '../../api.js';
import { html, Card, Field, formatUsd, formatNumber } from '../../components.js';
import { parseWholeNumber, apiErrorToFields, focusFirstInvalid, fieldDomId } from '../users/form-values.js';
import { FormError } from '../users/form-error.js';
import { formatPerMillion } from './format.js';

const FIELDS = ['calc_model', 'calc_provider', 'calc_input', 'calc_cached', 'calc_write', 'calc_output'];
const PARAMS = {
  model: 'calc_model', provider: 'calc_provider', input_tokens: 'calc_input',
  cached_input_tokens: 'calc_cached', cache_write_tokens: 'calc_write', output_tokens: 'calc_output',
};

function Breakdown({ r }) {
  const p = r.price;
  const plain = Math.max(0, r.input_tokens - r.cached_input_tokens - r.cache_write_tokens);
  const rows = [
    ['Input', plain, p.input_price_per_million, r.input_cost_usd],
    ['Cached input', r.cached_input_tokens, p.cached_input_price_per_million ?? p.input_price_per_million, r.cached_input_cost_usd],
    ['Cache write', r.cache_write_tokens, p.cache_write_price_per_million ?? p.input_price_per_million, r.cache_write_cost_usd],
    ['Output', r.output_tokens, p.output_price_per_million, r.output_cost_usd],
  ];
  return html`<table class="table table-compact calc-breakdown">
    <thead><tr><th scope="col">Part</th><th scope="col" class="num">Tokens</th><th scope="col" class="num">$/M</th><th scope="col" class="num">Cost</th></tr></thead>
    <tbody>
      ${rows.map(([label, tokens, rate, cost]) => html`<tr>
        <td>${label}</td><td class="num">${formatNumber(tokens)}</td><td class="num muted">${formatPerMillion(rate)}</td><td class="num">${formatUsd(cost)}</td>
      </tr>`)}
    </tbody>
    <tfoot><tr><td>Total</td><td class="num">${formatNumber(r.input_tokens + r.output_tokens)}</td><td></td><td class="num">${formatUsd(r.cost_usd)}</td></tr></tfoot>
  </table>`;
}

/** Props: `prices` (Price[] for suggestions), `providers` ([{id, name}]). */
export function CostCalculator({ prices, providers = [] }) {
  const { values, setValues, errors, setErrors, formError, setFormError, busy, setBusy, set } = useForm({ calc_model: '', calc_provider: '', calc_input: '1000', calc_cached: '0', calc_write: '0', calc_output: '500' });
  const [result, setResult] = useState(null);

  async function submit(e) {
    e.preventDefault();
    if (busy) return;
    const found = {};
    const model = values.calc_model.trim();
    if (!model) found.calc_model = 'Pick a model.';
    const count = (k, required) => {
      const parsed = parseWholeNumber(values[k], { required, allowZero: true });
      if (parsed.error) found[k] = parsed.error;
      return parsed.value ?? 0;
    };
    const input = count('calc_input', true);
    const cached = count('calc_cached', false);
    const written = count('calc_write', false);
    const output = count('calc_output', true);
    if (!found.calc_cached && !found.calc_write && cached + written > input) {
      found.calc_cached = 'Cached and cache-write tokens are part of the input tokens: they cannot exceed them.';
    }
    setErrors(found);
    setFormError(null);
    if (Object.keys(found).length) return focusFirstInvalid(FIELDS, found);
    const body = { model, input_tokens: input, output_tokens: output, cached_input_tokens: cached, cache_write_tokens: written };
    if (values.calc_provider.trim()) body.provider = values.calc_provider.trim();
    setBusy(true);
    try {
      setResult(await api('POST', '/pricing/calculate', body));
    } catch (err) {
      setResult(null);
      if (err.code === 'model_not_found') {
        setErrors({ calc_model: err.message });
        focusFirstInvalid(FIELDS, { calc_model: true });
      } else {
        const mapped = apiErrorToFields(err, PARAMS);
        setErrors(mapped.fields);
        setFormError(mapped.form);
        focusFirstInvalid(FIELDS, mapped.fields);
      }
    } finally {
      setBusy(false);
    }
  }

  const id = fieldDomId;
  const input = (k, extra = {}) => html`<input id=${id(k)} class="input" value=${values[k]} onInput=${set(k)} autocomplete="off" ...${extra} />`;
  const tokens = (k) => input(k, { inputMode: 'numeric' });
  return html`<${Card} title="Cost calculator" class="calc-card">
    <form class="calc-form" onSubmit=${submit} novalidate>
      <${FormError} error=${formError} />
      <div class="calc-fields">
        <${Field} label="Calculator model" id=${id('calc_model')} error=${errors.calc_model} class="calc-model">
          ${input('calc_model', { list: 'calc-models', placeholder: 'e.g. gpt-4o-mini', class: 'input mono', spellcheck: false })}
        <//>
        <${Field} label="Provider" id=${id('calc_provider')} error=${errors.calc_provider} class="calc-provider">
          ${input('calc_provider', { list: 'calc-providers', placeholder: 'Any' })}
        <//>
        <${Field} label="Input tokens" id=${id('calc_input')} error=${errors.calc_input}>${tokens('calc_input')}<//>
        <${Field} label="Cached input tokens" id=${id('calc_cached')} error=${errors.calc_cached}>${tokens('calc_cached')}<//>
        <${Field} label="Cache write tokens" id=${id('calc_write')} error=${errors.calc_write}>${tokens('calc_write')}<//>
        <${Field} label="Output tokens" id=${id('calc_output')} error=${errors.calc_output}>${tokens('calc_output')}<//>
      </div>
      <div class="calc-actions">
        <button type="submit" class="btn btn-primary" disabled=${busy}>${busy ? 'Calculating…' : 'Calculate'}</button>
        <p class="hint">Input tokens include the cached and cache-write ones, as OpenAI's <code>prompt_tokens</code> do. With a provider, dated model names (gpt-4o-mini-2024-07-18) match the way real traffic does.</p>
      </div>
      <datalist id="calc-models">${prices.map((p) => html`<option value=${p.model}>${p.provider ?? ''}</option>`)}</datalist>
      <datalist id="calc-providers">${providers.map((p) => html`<option value=${p.id}>${p.name}</option>`)}</datalist>
    </form>
    ${result &&
    html`<div class="calc-result" data-testid="calc-result" aria-live="polite">
      <div class="calc-summary">
        <div class="calc-total-label">
          Cost of this request with <span class="mono">${result.price.model}</span>${result.price.provider ? html` <span class="muted">(${result.price.provider})</span>` : ''}
        </div>
        <div class="calc-total">${formatUsd(result.cost_usd)}</div>
        <div class="muted small">${formatNumber(result.cost_nanos)} nano-USD</div>
        <div class="muted small">${formatUsd(result.cost_usd * 1000)} per 1,000 such requests</div>
      </div>
      <${Breakdown} r=${result} />
    </div>`}
  <//>`;
}
