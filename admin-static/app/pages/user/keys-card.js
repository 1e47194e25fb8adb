/**
 * "API keys" card of a user's page: the keys table, creating a key (shown once), testing a key
 * through the real pipeline (optionally with a one-token completion) and revoking it.
 */
import { useState } from 'preact/hooks';
import { api } from '../../api.js';
import {
  html, Card, Spinner, ErrorBox, EmptyState, Badge, ConfirmDialog, useAsync, toast,
  formatDate, formatDateTime, formatRelative, formatNumber,
} from '../../components.js';
import { NewKeyModal, NewKeyPanel, KeyTestResult } from './key-dialogs.js';

const STATUS_TONE = { active: 'ok', revoked: 'err', expired: 'warn' };

function keyLabel(key) {
  return key.name ? `${key.name} (${key.key_prefix}…)` : `${key.key_prefix}…`;
}

function KeyRow({ k, testing, onTest, onRevoke }) {
  const active = k.status === 'active';
  return html`<tr data-testid="key-row" class=${active ? '' : 'row-dim'}>
    <td>${k.name || html`<span class="muted">unnamed</span>`}
      ${k.tags && html`<div class="key-tags" data-testid="key-tags">${Object.entries(k.tags).map(([n, v]) => html`<span class="badge badge-muted mono">${n}=${v}</span> `)}</div>`}</td>
    <td><code class="mono">${k.key_prefix}…</code></td>
    <td class="nowrap" title=${formatDateTime(k.created_at)}>${formatDate(k.created_at)}</td>
    <td class="nowrap" title=${k.last_used_at ? formatDateTime(k.last_used_at) : ''}>
      ${k.last_used_at ? formatRelative(k.last_used_at) : html`<span class="muted">never</span>`}
    </td>
    <td class="nowrap">${k.expires_at ? formatDate(k.expires_at) : html`<span class="muted">never</span>`}</td>
    <td class="num nowrap">${k.rpm == null && k.tpm == null ? html`<span class="muted">user's</span>` : `${k.rpm == null ? '∞' : formatNumber(k.rpm)} / ${k.tpm == null ? '∞' : formatNumber(k.tpm)}`}</td>
    <td>
      <${Badge} tone=${STATUS_TONE[k.status] ?? 'muted'} title=${k.revoked_at ? `Revoked ${formatDateTime(k.revoked_at)}` : undefined}>${k.status}<//>
    </td>
    <td class="actions">
      ${active &&
      html`<button type="button" class="btn btn-sm" onClick=${() => onTest(k)} disabled=${testing}>
          ${testing ? 'Testing…' : 'Test'}
        </button>
        <button type="button" class="btn btn-sm btn-danger-ghost" onClick=${() => onRevoke(k)}>Revoke</button>`}
    </td>
  </tr>`;
}

/** Props: `userId`, `onChanged()` (key count and last use on the summary card move with keys). */
export function KeysCard({ userId, onChanged }) {
  const keys = useAsync(() => api('GET', `/users/${userId}/keys`), [userId]);
  // Priced models make good suggestions for the test completion; without them the input still works.
  const priced = useAsync(() => api('GET', '/pricing').catch(() => null), []);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState(null);
  const [revoking, setRevoking] = useState(null);
  const [testModel, setTestModel] = useState('');
  const [testingId, setTestingId] = useState(null);
  const [test, setTest] = useState(null);

  function onCreated(key) {
    setCreating(false);
    setCreated(key);
    keys.reload();
    onChanged();
  }

  async function runTest(k) {
    setTestingId(k.id);
    setTest(null);
    const model = testModel.trim();
    try {
      const result = await api('POST', `/keys/${k.id}/test`, model ? { model } : {});
      setTest({ label: keyLabel(k), result });
    } catch (error) {
      setTest({ label: keyLabel(k), error });
    } finally {
      setTestingId(null);
      keys.reload();
      onChanged();
    }
  }

  async function revoke() {
    const k = revoking;
    await api('POST', `/keys/${k.id}/revoke`);
    setRevoking(null);
    if (test && test.label === keyLabel(k)) setTest(null);
    toast(`Key ${keyLabel(k)} revoked`);
    keys.reload();
    onChanged();
  }

  const newKeyButton = html`<button type="button" class="btn btn-primary btn-sm" onClick=${() => setCreating(true)}>New key</button>`;
  const list = keys.data?.data ?? [];
  const anyActive = list.some((k) => k.status === 'active');

  let body;
  if (keys.error && !keys.data) body = html`<${ErrorBox} error=${keys.error} onRetry=${keys.reload} />`;
  else if (!keys.data) body = html`<${Spinner} label="Loading keys…" />`;
  else if (list.length === 0)
    body = html`<${EmptyState} title="No API keys yet" hint="Create a key to let this user call the gateway with the OpenAI SDK or curl."
      action=${html`<button type="button" class="btn btn-primary" onClick=${() => setCreating(true)}>Create the first key</button>`} />`;
  else
    body = html`<div class="table-wrap">
      <table class="table">
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Prefix</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">Expires</th>
            <th scope="col" class="num" title="Per-key requests / tokens per minute">RPM / TPM</th>
            <th scope="col">Status</th>
            <th scope="col" class="actions"><span class="sr-only">Actions</span></th>
          </tr>
        </thead>
        <tbody>
          ${list.map((k) => html`<${KeyRow} key=${k.id} k=${k} testing=${testingId === k.id} onTest=${runTest} onRevoke=${setRevoking} />`)}
        </tbody>
      </table>
    </div>`;

  return html`<${Card} title="API keys" actions=${newKeyButton} flush>
    ${created && html`<div class="card-section"><${NewKeyPanel} created=${created} onDone=${() => setCreated(null)} /></div>`}
    ${anyActive &&
    html`<div class="toolbar toolbar-sub">
      <label for="key-test-model" class="toolbar-label">Also try a model</label>
      <input id="key-test-model" class="input input-sm" list="key-test-models" placeholder="optional, e.g. gpt-4o-mini"
        value=${testModel} onInput=${(e) => setTestModel(e.currentTarget.value)} autocomplete="off" aria-describedby="key-test-model-hint" />
      <span id="key-test-model-hint" class="hint">
        ${testModel.trim() ? 'Test also sends a one-token chat completion (it is billed).' : 'Test calls GET /api/account as the key; with a model it also sends a one-token completion.'}
      </span>
    </div>`}
    <datalist id="key-test-models">
      ${(priced.data?.data ?? []).map((p) => html`<option value=${p.model} />`)}
    </datalist>
    ${test && html`<div class="card-section"><${KeyTestResult} keyLabel=${test.label} result=${test.result} error=${test.error} onDismiss=${() => setTest(null)} /></div>`}
    ${body}
    ${creating && html`<${NewKeyModal} userId=${userId} onClose=${() => setCreating(false)} onCreated=${onCreated} />`}
    ${revoking &&
    html`<${ConfirmDialog}
      title="Revoke key?"
      message=${html`<p>Requests with <strong>${keyLabel(revoking)}</strong> are refused with 401 from now on. This cannot be undone; create a new key to restore access.</p>`}
      confirmLabel="Revoke key"
      danger
      onConfirm=${revoke}
      onCancel=${() => setRevoking(null)}
    />`}
  <//>`;
}
