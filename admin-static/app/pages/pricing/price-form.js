/**
 * The "New price" / "Edit price" modal. Prices are USD per million tokens; cached input and
 * cache write are optional (empty: billed as plain input). Creating a model that has a row
 * already answers 409, shown on Model; editing replaces the row (PUT).
 */
import { useForm } from '../../components/use-form.js';
import { api } from '../../api.js';
import { html, Modal, Field } from '../../components.js';
import { parseAmount, apiErrorToFields, focusFirstInvalid, fieldDomId } from '../users/form-values.js';
import { FormError } from '../users/form-error.js';

const FIELDS = ['model', 'provider', 'input_price_per_million', 'output_price_per_million', 'cached_input_price_per_million', 'cache_write_price_per_million'];
const PARAMS = Object.fromEntries(FIELDS.map((k) => [k, k]));
const AMOUNTS = FIELDS.slice(2);
const REQUIRED = new Set(['input_price_per_million', 'output_price_per_million']);

function initial(price, prefill) {
  const s = (n) => (n == null ? '' : String(n));
  return {
    model: price?.model ?? prefill?.model ?? '',
    provider: price?.provider ?? prefill?.provider ?? '',
    input_price_per_million: s(price?.input_price_per_million),
    output_price_per_million: s(price?.output_price_per_million),
    cached_input_price_per_million: s(price?.cached_input_price_per_million),
    cache_write_price_per_million: s(price?.cache_write_price_per_million),
  };
}

/**
 * Props: `price` (Price to edit, or absent), `prefill` ({model, provider} for a new price),
 * `providers` ([{id, name}] for suggestions), `onClose()`, `onSaved(price)`.
 */
export function PriceFormModal({ price, prefill, providers = [], onClose, onSaved }) {
  const editing = Boolean(price);
  const { values, setValues, errors, setErrors, formError, setFormError, busy: saving, setBusy: setSaving, set } = useForm(() => initial(price, prefill));

  async function submit(e) {
    e.preventDefault();
    if (saving) return;
    const found = {};
    const body = { model: values.model.trim(), provider: values.provider.trim() || null };
    if (!body.model) found.model = 'Model is required, e.g. gpt-4o-mini.';
    for (const k of AMOUNTS) {
      const parsed = parseAmount(values[k], { required: REQUIRED.has(k) });
      if (parsed.error) found[k] = parsed.error;
      else body[k] = parsed.value;
    }
    setErrors(found);
    setFormError(null);
    if (Object.keys(found).length) return focusFirstInvalid(FIELDS, found);
    setSaving(true);
    try {
      const saved = editing
        ? await api('PUT', `/pricing/${encodeURIComponent(price.model)}`, body)
        : await api('POST', '/pricing', body);
      onSaved(saved);
    } catch (err) {
      const mapped = apiErrorToFields(err, PARAMS, 'model');
      setErrors(mapped.fields);
      setFormError(mapped.form);
      focusFirstInvalid(FIELDS, mapped.fields);
      setSaving(false);
    }
  }

  const id = fieldDomId;
  const input = (k, extra = {}) => html`<input id=${id(k)} class="input" value=${values[k]} onInput=${set(k)} autocomplete="off" ...${extra} />`;
  const money = (k, placeholder, extra = {}) => input(k, { inputMode: 'decimal', placeholder, ...extra });
  // With the model known (editing, or "Set price" on an unpriced model), the price is what is left to type.
  const modelKnown = editing || Boolean(prefill?.model);
  const footer = html`
    <button type="button" class="btn" onClick=${onClose}>Cancel</button>
    <button type="submit" form="price-form" class="btn btn-primary" disabled=${saving}>${saving ? 'Saving…' : 'Save price'}</button>`;
  return html`<${Modal} title=${editing ? `Edit price: ${price.model}` : 'New price'} onClose=${onClose} footer=${footer}>
    <form id="price-form" class="form" onSubmit=${submit} novalidate>
      <${FormError} error=${formError} />
      <${Field} label="Model" id=${id('model')} error=${errors.model}
        hint=${editing ? 'To rename a model, delete this price and create a new one.' : 'As clients send it, e.g. gpt-4o-mini. Dated names (gpt-4o-mini-2024-07-18) fall back to it.'}>
        ${input('model', { readOnly: editing, class: editing ? 'input mono is-readonly' : 'input mono', spellcheck: false })}
      <//>
      <${Field} label="Provider" id=${id('provider')} error=${errors.provider} hint="Optional. Empty: the price applies whichever provider serves the model.">
        ${input('provider', { list: 'price-providers', placeholder: 'Any provider' })}
      <//>
      <datalist id="price-providers">${providers.map((p) => html`<option value=${p.id}>${p.name}</option>`)}</datalist>
      <p class="hint">Prices are in US dollars per million tokens.</p>
      <div class="form-row">
        <${Field} label="Input $/M" id=${id('input_price_per_million')} error=${errors.input_price_per_million}>
          ${money('input_price_per_million', 'e.g. 0.15', modelKnown ? { autofocus: true } : {})}
        <//>
        <${Field} label="Output $/M" id=${id('output_price_per_million')} error=${errors.output_price_per_million}>
          ${money('output_price_per_million', 'e.g. 0.60')}
        <//>
      </div>
      <div class="form-row">
        <${Field} label="Cached input $/M" id=${id('cached_input_price_per_million')} error=${errors.cached_input_price_per_million} hint="Empty: cached tokens cost as input.">
          ${money('cached_input_price_per_million', 'Same as input')}
        <//>
        <${Field} label="Cache write $/M" id=${id('cache_write_price_per_million')} error=${errors.cache_write_price_per_million} hint="Empty: cache writes cost as input.">
          ${money('cache_write_price_per_million', 'Same as input')}
        <//>
      </div>
    </form>
  <//>`;
}
