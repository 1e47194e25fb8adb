/**
 * "Re-price past requests" card: after a price fix, bill the log rows of one model in a date range
 * again at today's price. "Preview" asks the server for a dry run (rows, cost before and after, each
 * user's spend this period); "Apply" runs the same in one transaction. The server bounds one call
 * (larger ranges: `tollgate pricing reprice`).
 */
import { useState } from 'preact/hooks';
import { useForm } from '../../components/use-form.js';
import { api } from '../../api.js';
import { html, Card, Field, formatUsd, formatNumber } from '../../components.js';
import { apiErrorToFields, focusFirstInvalid, fieldDomId } from '../users/form-values.js';
import { FormError } from '../users/form-error.js';

const FIELDS = ['reprice_model', 'reprice_provider', 'reprice_from', 'reprice_to'];
const PARAMS = { model: 'reprice_model', provider: 'reprice_provider', from: 'reprice_from', to: 'reprice_to' };

function Summary({ r }) {
  return html`<div class="calc-result" data-testid="reprice-result" aria-live="polite">
    <p>
      ${r.dry_run ? 'Would re-price' : 'Re-priced'} <strong>${formatNumber(r.changed_rows)}</strong> of ${formatNumber(r.rows)} requests
      of <span class="mono">${r.model}</span>${r.provider ? html` <span class="muted">(${r.provider})</span>` : ''}:
      cost ${formatUsd(r.cost_before_usd)} → <strong>${formatUsd(r.cost_after_usd)}</strong>${' '}
      <span class="muted small">(${formatNumber(r.cost_before_nanos)} → ${formatNumber(r.cost_after_nanos)} nano-USD)</span>.
      ${r.unpriced_rows ? html` ${formatNumber(r.unpriced_rows)} have no price now.` : ''}
    </p>
    ${r.spend.length > 0 &&
    html`<table class="table table-compact">
      <thead><tr><th scope="col">User</th><th scope="col" class="num">Spend this period</th><th scope="col" class="num">After</th></tr></thead>
      <tbody>${r.spend.map((s) => html`<tr><td>${s.user_name}</td><td class="num">${formatUsd(s.spent_before_usd)}</td><td class="num">${formatUsd(s.spent_after_usd)}</td></tr>`)}</tbody>
    </table>`}
  </div>`;
}

/** Props: `prices` (Price[] for suggestions), `onApplied()` after a re-pricing was written. */
export function RepriceCard({ prices, onApplied }) {
  const monthStart = new Date().toISOString().slice(0, 8) + '01';
  const { values, errors, setErrors, formError, setFormError, busy, setBusy, set } = useForm({ reprice_model: '', reprice_provider: '', reprice_from: monthStart, reprice_to: '' });
  const [result, setResult] = useState(null);

  async function run(dryRun) {
    if (busy) return;
    const found = {};
    if (!values.reprice_model.trim()) found.reprice_model = 'Pick a model.';
    if (!values.reprice_from.trim()) found.reprice_from = 'Give the first date (YYYY-MM-DD).';
    setErrors(found);
    setFormError(null);
    if (Object.keys(found).length) return focusFirstInvalid(FIELDS, found);
    const body = { model: values.reprice_model.trim(), from: values.reprice_from.trim(), dry_run: dryRun };
    if (values.reprice_provider.trim()) body.provider = values.reprice_provider.trim();
    if (values.reprice_to.trim()) body.to = values.reprice_to.trim();
    setBusy(true);
    try {
      setResult(await api('POST', '/pricing/reprice', body));
      if (!dryRun) onApplied?.();
    } catch (err) {
      setResult(null);
      const mapped = apiErrorToFields(err, PARAMS);
      setErrors(mapped.fields);
      setFormError(mapped.form);
      focusFirstInvalid(FIELDS, mapped.fields);
    } finally {
      setBusy(false);
    }
  }

  const id = fieldDomId;
  const input = (k, extra = {}) => html`<input id=${id(k)} class="input" value=${values[k]} onInput=${set(k)} autocomplete="off" ...${extra} />`;
  return html`<${Card} title="Re-price past requests" class="calc-card">
    <form class="calc-form" onSubmit=${(e) => { e.preventDefault(); run(true); }} novalidate>
      <${FormError} error=${formError} />
      <div class="calc-fields">
        <${Field} label="Re-price model" id=${id('reprice_model')} error=${errors.reprice_model} class="calc-model">
          ${input('reprice_model', { list: 'reprice-models', placeholder: 'e.g. gpt-4o-mini', class: 'input mono', spellcheck: false })}
        <//>
        <${Field} label="Served by" id=${id('reprice_provider')} error=${errors.reprice_provider}>${input('reprice_provider', { placeholder: 'Any provider' })}<//>
        <${Field} label="From" id=${id('reprice_from')} error=${errors.reprice_from}>${input('reprice_from', { placeholder: 'YYYY-MM-DD' })}<//>
        <${Field} label="To (exclusive)" id=${id('reprice_to')} error=${errors.reprice_to}>${input('reprice_to', { placeholder: 'Now' })}<//>
      </div>
      <div class="calc-actions">
        <button type="submit" class="btn" disabled=${busy}>Preview</button>
        <button type="button" class="btn btn-primary" disabled=${busy || !result || !result.dry_run} onClick=${() => run(false)}>Apply</button>
        <p class="hint">Bills the logged requests of this model again at today's price, from the token counts each row keeps. Users' spend this budget period moves by the difference. Preview first; Apply writes it.</p>
      </div>
      <datalist id="reprice-models">${prices.map((p) => html`<option value=${p.model}>${p.provider ?? ''}</option>`)}</datalist>
    </form>
    ${result && html`<${Summary} r=${result} />`}
  <//>`;
}
