/**
 * The create / edit form of a gateway user, in a modal. Validates on the client first (name
 * required, budget ≥ 0 or empty for no limit, rpm/tpm/concurrency positive whole numbers or empty),
 * then shows the server's 400 on the field its `param` names and a 409 (name taken) on Name.
 */
import { useForm } from '../../components/use-form.js';
import { api } from '../../api.js';
import { html, Modal, Field } from '../../components.js';
import { parseAmount, parseWholeNumber, apiErrorToFields, focusFirstInvalid, fieldDomId } from './form-values.js';
import { FormError } from './form-error.js';

const FIELD_ORDER = ['name', 'email', 'budget_limit_usd', 'budget_period', 'rpm', 'tpm', 'max_concurrent', 'disabled'];
const PARAMS = Object.fromEntries(FIELD_ORDER.map((k) => [k, k]));
const PERIODS = [
  ['daily', 'Daily'],
  ['weekly', 'Weekly'],
  ['monthly', 'Monthly'],
  ['never', 'Never (lifetime budget)'],
];
const EMAIL_RE = /^[^\s@]+@[^\s@]+$/;

function initialValues(user) {
  return {
    name: user?.name ?? '',
    email: user?.email ?? '',
    budget_limit_usd: user?.budget_limit_usd == null ? '' : String(user.budget_limit_usd),
    budget_period: user?.budget_period ?? 'monthly',
    rpm: user?.rpm == null ? '' : String(user.rpm),
    tpm: user?.tpm == null ? '' : String(user.tpm),
    max_concurrent: user?.max_concurrent == null ? '' : String(user.max_concurrent),
    disabled: Boolean(user?.disabled),
  };
}

/** Validates the raw inputs; returns `{ body, errors }` with the API body when valid. */
function validate(v) {
  const errors = {};
  const name = v.name.trim();
  if (!name) errors.name = 'Name is required.';
  const email = v.email.trim();
  if (email && !EMAIL_RE.test(email)) errors.email = 'Enter an email address like ana@example.com, or leave it empty.';
  const budget = parseAmount(v.budget_limit_usd);
  if (budget.error) errors.budget_limit_usd = budget.error;
  const rpm = parseWholeNumber(v.rpm);
  if (rpm.error) errors.rpm = rpm.error;
  const tpm = parseWholeNumber(v.tpm);
  if (tpm.error) errors.tpm = tpm.error;
  const maxConcurrent = parseWholeNumber(v.max_concurrent);
  if (maxConcurrent.error) errors.max_concurrent = maxConcurrent.error;
  const body = {
    name,
    email: email || null,
    budget_limit_usd: budget.value ?? null,
    budget_period: v.budget_period,
    rpm: rpm.value ?? null,
    tpm: tpm.value ?? null,
    max_concurrent: maxConcurrent.value ?? null,
    disabled: v.disabled,
  };
  return { body, errors };
}

/** Only what changed, so an edit never trips over fields it did not touch. */
function changedFields(body, user) {
  const out = {};
  for (const k of FIELD_ORDER) {
    const before = k === 'email' ? user[k] ?? null : user[k];
    if (body[k] !== before) out[k] = body[k];
  }
  return out;
}

/**
 * Props: `user` (AdminUser to edit, or absent to create), `onClose()`, `onSaved(user)`.
 */
export function UserFormModal({ user, onClose, onSaved }) {
  const editing = Boolean(user);
  const { values, setValues, errors, setErrors, formError, setFormError, busy: saving, setBusy: setSaving, set } = useForm(() => initialValues(user));

  async function submit(e) {
    e.preventDefault();
    if (saving) return;
    const { body, errors: found } = validate(values);
    setErrors(found);
    setFormError(null);
    if (Object.keys(found).length) {
      focusFirstInvalid(FIELD_ORDER, found);
      return;
    }
    setSaving(true);
    try {
      let saved;
      if (editing) {
        const patch = changedFields(body, user);
        saved = Object.keys(patch).length ? await api('PATCH', `/users/${user.id}`, patch) : user;
      } else {
        const { disabled, ...create } = body;
        saved = await api('POST', '/users', create);
      }
      onSaved(saved);
    } catch (err) {
      const mapped = apiErrorToFields(err, PARAMS, 'name');
      setErrors(mapped.fields);
      setFormError(mapped.form);
      focusFirstInvalid(FIELD_ORDER, mapped.fields);
      setSaving(false);
    }
  }

  const id = fieldDomId;
  const input = (key, extra = {}) => html`<input
    id=${id(key)}
    class="input"
    value=${values[key]}
    onInput=${set(key)}
    aria-invalid=${errors[key] ? 'true' : undefined}
    ...${extra}
  />`;
  const submitLabel = editing ? 'Save changes' : 'Create user';

  const footer = html`
    <button type="button" class="btn" onClick=${onClose}>Cancel</button>
    <button type="submit" form="user-form" class="btn btn-primary" disabled=${saving}>
      ${saving ? 'Saving…' : submitLabel}
    </button>
  `;

  return html`
    <${Modal} title=${editing ? `Edit ${user.name}` : 'New user'} onClose=${onClose} footer=${footer}>
      <form id="user-form" class="form" onSubmit=${submit} novalidate>
        <${FormError} error=${formError} />
        <${Field} label="Name" id=${id('name')} error=${errors.name} hint="Unique. Shown in logs and on the dashboard.">
          ${input('name', { autocomplete: 'off', required: true, autoFocus: true, maxLength: 200 })}
        <//>
        <${Field} label="Email" id=${id('email')} error=${errors.email} hint="Optional, for your own reference.">
          ${input('email', { type: 'email', autocomplete: 'off' })}
        <//>
        <div class="form-row">
          <${Field} label="Budget (USD)" id=${id('budget_limit_usd')} error=${errors.budget_limit_usd} hint="Empty means no limit.">
            ${input('budget_limit_usd', { inputMode: 'decimal', placeholder: 'No limit' })}
          <//>
          <${Field} label="Budget period" id=${id('budget_period')} error=${errors.budget_period} hint="When spend resets to zero.">
            <select id=${id('budget_period')} class="input" value=${values.budget_period} onChange=${set('budget_period')}>
              ${PERIODS.map(([v, label]) => html`<option value=${v}>${label}</option>`)}
            </select>
          <//>
        </div>
        <div class="form-row">
          <${Field} label="RPM" id=${id('rpm')} error=${errors.rpm} hint="Requests per minute.">
            ${input('rpm', { inputMode: 'numeric', placeholder: 'No limit' })}
          <//>
          <${Field} label="TPM" id=${id('tpm')} error=${errors.tpm} hint="Tokens per minute.">
            ${input('tpm', { inputMode: 'numeric', placeholder: 'No limit' })}
          <//>
        </div>
        <${Field} label="Concurrent requests" id=${id('max_concurrent')} error=${errors.max_concurrent} hint="Requests in flight at once, streams included. Empty: the gateway's default (rate-limit defaultMaxConcurrent, 64 unless configured).">
          ${input('max_concurrent', { inputMode: 'numeric', placeholder: 'Gateway default' })}
        <//>
        ${editing &&
        html`<div class="field field-check">
          <label class="check">
            <input id=${id('disabled')} type="checkbox" checked=${values.disabled} onChange=${set('disabled')} />
            <span>Disabled</span>
          </label>
          <p class="hint">A disabled user's keys are refused with 401 until you enable it again.</p>
          ${errors.disabled && html`<p class="field-error">${errors.disabled}</p>`}
        </div>`}
      </form>
    <//>
  `;
}
