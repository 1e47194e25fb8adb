/**
 * API key pieces of a user's page: the "New key" form, the panel that shows a new key once, and
 * the outcome of a key test.
 */
import { useForm } from '../../components/use-form.js';
import { api } from '../../api.js';
import { html, Modal, Field, Badge, CopyButton, formatUsd, formatNumber, formatMs } from '../../components.js';
import { parseWholeNumber, apiErrorToFields, focusFirstInvalid, fieldDomId } from '../users/form-values.js';
import { FormError } from '../users/form-error.js';

const KEY_FIELDS = ['key_name', 'expires_at', 'key_rpm', 'key_tpm', 'key_models', 'key_tags'];
const KEY_PARAMS = { name: 'key_name', expires_at: 'expires_at', rpm: 'key_rpm', tpm: 'key_tpm', models: 'key_models', tags: 'key_tags' };

/** "project=search, cost-center=42" as {project: "search", "cost-center": "42"}; the server checks names and values. */
function parseTags(text) {
  const tags = {};
  for (const part of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const eq = part.indexOf('=');
    if (eq <= 0) return { error: `“${part}” is not name=value.` };
    tags[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  return { value: Object.keys(tags).length ? tags : null };
}

/** `YYYY-MM-DD` (a date input) → the end of that local day as ISO-8601, or an error. */
function parseExpiry(text) {
  if (!text) return { value: null };
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!m) return { error: 'Pick a date.' };
  const end = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]), 23, 59, 59, 999);
  if (end.getTime() <= Date.now()) return { error: 'Pick a date in the future.' };
  return { value: end.toISOString() };
}

/** Props: `userId`, `onClose()`, `onCreated(key)` with the key object including `key`. */
export function NewKeyModal({ userId, onClose, onCreated }) {
  const { values, setValues, errors, setErrors, formError, setFormError, busy: saving, setBusy: setSaving, set } = useForm({ key_name: '', expires_at: '', key_rpm: '', key_tpm: '', key_models: '', key_tags: '' });

  async function submit(e) {
    e.preventDefault();
    if (saving) return;
    const found = {};
    const expiry = parseExpiry(values.expires_at);
    if (expiry.error) found.expires_at = expiry.error;
    const rpm = parseWholeNumber(values.key_rpm);
    if (rpm.error) found.key_rpm = rpm.error;
    const tpm = parseWholeNumber(values.key_tpm);
    if (tpm.error) found.key_tpm = tpm.error;
    const tags = parseTags(values.key_tags);
    if (tags.error) found.key_tags = tags.error;
    setErrors(found);
    setFormError(null);
    if (Object.keys(found).length) return focusFirstInvalid(KEY_FIELDS, found);
    const body = {};
    if (values.key_name.trim()) body.name = values.key_name.trim();
    if (expiry.value) body.expires_at = expiry.value;
    if (rpm.value != null) body.rpm = rpm.value;
    if (tpm.value != null) body.tpm = tpm.value;
    const models = values.key_models.split(',').map((m) => m.trim()).filter(Boolean);
    if (models.length) body.models = models;
    if (tags.value) body.tags = tags.value;
    setSaving(true);
    try {
      onCreated(await api('POST', `/users/${userId}/keys`, body));
    } catch (err) {
      const mapped = apiErrorToFields(err, KEY_PARAMS, 'key_name');
      setErrors(mapped.fields);
      setFormError(mapped.form);
      focusFirstInvalid(KEY_FIELDS, mapped.fields);
      setSaving(false);
    }
  }

  const id = fieldDomId;
  const footer = html`
    <button type="button" class="btn" onClick=${onClose}>Cancel</button>
    <button type="submit" form="key-form" class="btn btn-primary" disabled=${saving}>${saving ? 'Creating…' : 'Create key'}</button>`;
  const input = (k, extra) => html`<input id=${id(k)} class="input" value=${values[k]} onInput=${set(k)} ...${extra} />`;
  return html`<${Modal} title="New API key" onClose=${onClose} footer=${footer}>
    <form id="key-form" class="form" onSubmit=${submit} novalidate>
      <${FormError} error=${formError} />
      <${Field} label="Key name" id=${id('key_name')} error=${errors.key_name} hint="What uses this key, e.g. “ci” or “laptop”.">
        ${input('key_name', { autocomplete: 'off', maxLength: 200, placeholder: 'e.g. production app' })}
      <//>
      <${Field} label="Expires" id=${id('expires_at')} error=${errors.expires_at} hint="Optional. The key stops working after this day.">
        ${input('expires_at', { type: 'date' })}
      <//>
      <div class="form-row">
        <${Field} label="RPM" id=${id('key_rpm')} error=${errors.key_rpm} hint="Per-key requests per minute. Empty: the user's limit.">
          ${input('key_rpm', { inputMode: 'numeric', placeholder: 'User limit' })}
        <//>
        <${Field} label="TPM" id=${id('key_tpm')} error=${errors.key_tpm} hint="Per-key tokens per minute. Empty: the user's limit.">
          ${input('key_tpm', { inputMode: 'numeric', placeholder: 'User limit' })}
        <//>
      </div>
      <${Field} label="Models" id=${id('key_models')} error=${errors.key_models} hint="Optional. Comma-separated patterns of the models or groups this key may call (* matches anything), e.g. “openai/*, claude-*”. Empty: every model.">
        ${input('key_models', { autocomplete: 'off', placeholder: 'All models' })}
      <//>
      <${Field} label="Tags" id=${id('key_tags')} error=${errors.key_tags} hint="Optional. Comma-separated name=value labels put on every request this key makes, to filter logs and CSV by, e.g. “project=search, cost-center=42”.">
        ${input('key_tags', { autocomplete: 'off', placeholder: 'No tags' })}
      <//>
    </form>
  <//>`;
}

/** Props: `created` (Key + `key`), `onDone()`. The only place the secret is ever shown. */
export function NewKeyPanel({ created, onDone }) {
  return html`<div class="new-key-panel" role="region" aria-label="New API key">
    <div class="new-key-head">
      <strong>Key “${created.name || created.key_prefix}” created</strong>
      <span class="new-key-warning">Copy it now: it will not be shown again. Tollgate keeps only a hash of it.</span>
    </div>
    <div class="new-key-row">
      <code class="mono new-key-value" data-testid="new-key">${created.key}</code>
      <${CopyButton} text=${created.key} label="Copy" class="btn btn-sm btn-primary" />
      <button type="button" class="btn btn-sm" onClick=${onDone}>Done</button>
    </div>
  </div>`;
}

function limitLine(label, state) {
  if (!state) return html`<div><span class="muted">${label}:</span> no limit</div>`;
  return html`<div>
    <span class="muted">${label}:</span> ${formatNumber(state.remaining)} of ${formatNumber(state.limit)} left
    ${state.reset_ms ? html`<span class="muted"> · full in ${formatMs(state.reset_ms)}</span>` : ''}
  </div>`;
}

function budgetLine(budget) {
  if (!budget) return html`<span class="muted">not tracked</span>`;
  if (budget.limit_usd == null) return html`${formatUsd(budget.spent_usd)} spent <span class="muted">· no limit</span>`;
  return html`${formatUsd(budget.remaining_usd)} left <span class="muted">of ${formatUsd(budget.limit_usd)}</span>`;
}

function CompletionLine({ completion }) {
  if (!completion) return null;
  const ok = completion.status >= 200 && completion.status < 300 && !completion.error;
  return html`<div class="kv-row">
    <dt>Completion</dt>
    <dd>
      <${Badge} tone=${ok ? 'ok' : 'err'}>${completion.status || 'failed'}<//>
      <span class="mono"> ${completion.model}</span>
      <span class="muted"> · ${formatMs(completion.latency_ms)}</span>
      ${completion.error && html`<div class="field-error">${completion.error.message}${completion.error.code ? ` (${completion.error.code})` : ''}</div>`}
    </dd>
  </div>`;
}

/**
 * Props: `keyLabel`, `result` (the key test body) or `error` (ApiError of the test call itself),
 * `onDismiss()`.
 */
export function KeyTestResult({ keyLabel, result, error, onDismiss }) {
  const ok = result?.ok && result?.authenticated;
  const tone = error ? 'err' : ok ? 'ok' : 'err';
  const headline = error ? 'Test could not run' : ok ? 'Key works' : result.authenticated ? 'Key authenticated, request failed' : 'Key refused';
  return html`<div class=${`test-result test-result-${tone}`} data-testid="key-test-result" role="status" aria-live="polite">
    <div class="test-result-head">
      <strong>${headline}</strong>
      <span class="muted"> · ${keyLabel}</span>
      <button type="button" class="btn btn-ghost btn-sm test-result-close" onClick=${onDismiss}>Dismiss</button>
    </div>
    ${error
      ? html`<p>${error.message}</p>`
      : html`<dl class="kv">
          <div class="kv-row"><dt>Authenticated</dt><dd><${Badge} tone=${result.authenticated ? 'ok' : 'err'}>${result.authenticated ? 'yes' : 'no'}<//></dd></div>
          <div class="kv-row"><dt>HTTP status</dt><dd class="mono">${result.status}</dd></div>
          <div class="kv-row"><dt>Latency</dt><dd>${formatMs(result.latency_ms)}</dd></div>
          <div class="kv-row"><dt>Budget</dt><dd>${budgetLine(result.budget)}</dd></div>
          <div class="kv-row">
            <dt>Rate limits</dt>
            <dd>${result.rate_limits
              ? html`${limitLine('Requests', result.rate_limits.requests)}${limitLine('Tokens', result.rate_limits.tokens)}`
              : html`<span class="muted">unknown</span>`}</dd>
          </div>
          <${CompletionLine} completion=${result.completion} />
          ${result.error && html`<div class="kv-row"><dt>Error</dt><dd class="field-error">${result.error.message}${result.error.code ? ` (${result.error.code})` : ''}</dd></div>`}
        </dl>`}
  </div>`;
}
