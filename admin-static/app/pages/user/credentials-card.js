/**
 * "Provider credentials" card of a user's page: for every configured provider, the user's own key
 * (masked) or what requests fall back to, with Set/Replace, Test and Delete. A user's own key takes
 * precedence over the gateway's shared one for that user's requests.
 */
import { useState } from 'preact/hooks';
import { api } from '../../api.js';
import {
  html, Card, Spinner, ErrorBox, EmptyState, Badge, Modal, Field, ConfirmDialog, useAsync, toast,
  formatDateTime, formatMs, formatNumber,
} from '../../components.js';
import { apiErrorToFields, focusFirstInvalid, fieldDomId } from '../users/form-values.js';
import { FormError } from '../users/form-error.js';

const CRED_FIELDS = ['api_key', 'base_url'];

function CredentialModal({ userId, provider, existing, onClose, onSaved }) {
  const [apiKey, setApiKey] = useState('');
  const [baseUrl, setBaseUrl] = useState(existing?.base_url ?? '');
  const [errors, setErrors] = useState({});
  const [formError, setFormError] = useState(null);
  const [saving, setSaving] = useState(false);

  async function submit(e) {
    e.preventDefault();
    if (saving) return;
    const found = {};
    if (!apiKey.trim()) found.api_key = 'Paste the provider API key.';
    const url = baseUrl.trim();
    if (url && !/^https?:\/\/[^\s]+$/i.test(url)) found.base_url = 'Enter a URL starting with http:// or https://, or leave it empty.';
    setErrors(found);
    setFormError(null);
    if (Object.keys(found).length) return focusFirstInvalid(CRED_FIELDS, found);
    setSaving(true);
    try {
      const body = { api_key: apiKey.trim() };
      if (url) body.base_url = url;
      onSaved(await api('PUT', `/users/${userId}/credentials/${encodeURIComponent(provider.id)}`, body));
    } catch (err) {
      const mapped = apiErrorToFields(err, { api_key: 'api_key', base_url: 'base_url' });
      setErrors(mapped.fields);
      setFormError(mapped.form);
      focusFirstInvalid(CRED_FIELDS, mapped.fields);
      setSaving(false);
    }
  }

  const footer = html`
    <button type="button" class="btn" onClick=${onClose}>Cancel</button>
    <button type="submit" form="credential-form" class="btn btn-primary" disabled=${saving}>${saving ? 'Saving…' : 'Save credential'}</button>`;
  return html`<${Modal} title=${`${existing ? 'Replace' : 'Set'} ${provider.name} credential`} onClose=${onClose} footer=${footer}>
    <form id="credential-form" class="form" onSubmit=${submit} novalidate>
      <${FormError} error=${formError} />
      <p class="muted">This user's requests to ${provider.name} will use this key instead of the gateway's shared one. It is stored encrypted and never shown again, only a masked hint.</p>
      <${Field} label="API key" id=${fieldDomId('api_key')} error=${errors.api_key} hint=${existing ? `Replaces ${existing.hint}.` : null}>
        <input id=${fieldDomId('api_key')} class="input mono" type="password" autocomplete="off" spellcheck="false"
          value=${apiKey} onInput=${(e) => { setApiKey(e.currentTarget.value); setErrors((x) => ({ ...x, api_key: undefined })); }} />
      <//>
      <${Field} label="Base URL" id=${fieldDomId('base_url')} error=${errors.base_url} hint="Optional. Leave empty to use the provider's configured URL.">
        <input id=${fieldDomId('base_url')} class="input mono" type="url" autocomplete="off" placeholder="https://…"
          value=${baseUrl} onInput=${(e) => { setBaseUrl(e.currentTarget.value); setErrors((x) => ({ ...x, base_url: undefined })); }} />
      <//>
    </form>
  <//>`;
}

function TestOutcome({ outcome }) {
  if (!outcome) return null;
  if (outcome.running) return html`<div class="cred-test muted" role="status">Testing…</div>`;
  if (outcome.error) return html`<div class="cred-test field-error" role="status">Test failed: ${outcome.error.message}</div>`;
  const r = outcome.result;
  return html`<div class=${`cred-test ${r.ok ? 'tone-ok' : 'field-error'}`} role="status">
    ${r.ok
      ? html`✓ Works: ${r.models == null ? 'models listed' : `${formatNumber(r.models)} models`} · ${formatMs(r.latency_ms)}`
      : html`✕ ${r.status ? `HTTP ${r.status}: ` : ''}${r.error?.message ?? 'the provider refused the key'}`}
  </div>`;
}

function ProviderRow({ provider, cred, outcome, onSet, onTest, onDelete }) {
  // `shared` is reported by /me when the server knows whether a gateway-wide key exists.
  const fallback = provider.shared === true ? 'shared credential' : provider.shared === false ? 'not set' : null;
  return html`<tr>
    <td>
      <div class="cell-strong">${provider.name}</div>
      <div class="mono muted small">${provider.id}</div>
    </td>
    <td>
      ${cred
        ? html`<${Badge} tone="ok">own key<//> <code class="mono">${cred.hint}</code>
            ${cred.base_url && html`<div class="mono muted small">${cred.base_url}</div>`}`
        : fallback === 'shared credential'
          ? html`<${Badge} tone="muted">shared credential<//>`
          : fallback === 'not set'
            ? html`<${Badge} tone="warn">not set<//>`
            : html`<${Badge} tone="muted">not set<//> <span class="muted small">uses the shared credential, if configured</span>`}
      <${TestOutcome} outcome=${outcome} />
    </td>
    <td class="nowrap muted">${cred ? formatDateTime(cred.updated_at) : '—'}</td>
    <td class="actions">
      <button type="button" class="btn btn-sm" onClick=${() => onSet(provider, cred)}>${cred ? 'Replace' : 'Set'}</button>
      ${cred &&
      html`<button type="button" class="btn btn-sm" onClick=${() => onTest(provider)} disabled=${outcome?.running}>Test</button>
        <button type="button" class="btn btn-sm btn-danger-ghost" onClick=${() => onDelete(provider)}>Delete</button>`}
    </td>
  </tr>`;
}

/**
 * Props: `userId`, `userName`, `providers` ([{id, name}] from GET /me; fetched here when the shell
 * did not pass them).
 */
export function CredentialsCard({ userId, userName, providers }) {
  const state = useAsync(
    () => Promise.all([
      providers ? { gateway: { providers } } : api('GET', '/me'),
      api('GET', `/users/${userId}/credentials`),
    ]).then(([me, creds]) => ({
      providers: me?.gateway?.providers ?? [],
      creds: new Map((creds?.data ?? []).map((c) => [c.provider, c])),
    })),
    [userId],
  );
  const [editing, setEditing] = useState(null);
  const [deleting, setDeleting] = useState(null);
  const [outcomes, setOutcomes] = useState({});
  const setOutcome = (id, o) => setOutcomes((prev) => ({ ...prev, [id]: o }));

  async function test(provider) {
    setOutcome(provider.id, { running: true });
    try {
      const result = await api('POST', `/users/${userId}/credentials/${encodeURIComponent(provider.id)}/test`);
      setOutcome(provider.id, { result });
    } catch (error) {
      setOutcome(provider.id, { error });
    }
  }

  async function remove() {
    const provider = deleting;
    await api('DELETE', `/users/${userId}/credentials/${encodeURIComponent(provider.id)}`);
    setDeleting(null);
    setOutcome(provider.id, null);
    toast(`${provider.name} credential deleted`);
    state.reload();
  }

  function onSaved(cred) {
    const provider = editing.provider;
    setEditing(null);
    setOutcome(provider.id, null);
    toast(`${provider.name} credential saved (${cred.hint})`);
    state.reload();
  }

  let body;
  if (state.error && !state.data) body = html`<${ErrorBox} error=${state.error} onRetry=${state.reload} />`;
  else if (!state.data) body = html`<${Spinner} label="Loading credentials…" />`;
  else if (state.data.providers.length === 0)
    body = html`<${EmptyState} title="No providers configured" hint="Add providers to the gateway's manifest to give users their own provider keys." />`;
  else
    body = html`<div class="table-wrap">
      <table class="table">
        <thead>
          <tr>
            <th scope="col">Provider</th>
            <th scope="col">Credential</th>
            <th scope="col">Updated</th>
            <th scope="col" class="actions"><span class="sr-only">Actions</span></th>
          </tr>
        </thead>
        <tbody>
          ${state.data.providers.map(
            (p) => html`<${ProviderRow} key=${p.id} provider=${p} cred=${state.data.creds.get(p.id)} outcome=${outcomes[p.id]}
              onSet=${(provider, existing) => setEditing({ provider, existing })} onTest=${test} onDelete=${setDeleting} />`,
          )}
        </tbody>
      </table>
    </div>`;

  return html`<${Card} title="Provider credentials" flush>
    <p class="card-intro muted">Keys of ${userName}'s own provider accounts. Its requests use them instead of the gateway's shared keys.</p>
    ${body}
    ${editing &&
    html`<${CredentialModal} userId=${userId} provider=${editing.provider} existing=${editing.existing}
      onClose=${() => setEditing(null)} onSaved=${onSaved} />`}
    ${deleting &&
    html`<${ConfirmDialog}
      title=${`Delete ${deleting.name} credential?`}
      message=${html`<p>${userName}'s requests to ${deleting.name} will use the gateway's shared credential, if one is configured, or fail with <code class="mono">provider_not_configured</code>.</p>`}
      confirmLabel="Delete credential"
      danger
      onConfirm=${remove}
      onCancel=${() => setDeleting(null)}
    />`}
  <//>`;
}
