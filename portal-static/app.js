// The self-service portal (docs/portal.md): one page for a signed-in gateway user with their budget
// and spend, requests, keys (create, rename, revoke; a new key shown once), models and snippets.
// Everything comes from /portal/api/* with the session cookie; no admin data is ever fetched.
import { h, render } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import htm from 'htm';

const html = htm.bind(h);

/** Calls `/portal/api<path>`; throws an Error carrying the contract's error message and status. */
async function api(method, path, body) {
  const init = { method, credentials: 'same-origin', headers: { accept: 'application/json' } };
  if (body !== undefined) {
    init.headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const res = await fetch(`/portal/api${path}`, init);
  const text = res.status === 204 ? '' : await res.text();
  let parsed = null;
  try { parsed = text ? JSON.parse(text) : null; } catch { parsed = null; }
  if (!res.ok) {
    const error = new Error(parsed?.error?.message || `Request failed (HTTP ${res.status})`);
    error.status = res.status;
    throw error;
  }
  return parsed;
}

const usd = (value) => (value === null || value === undefined ? '—' : `$${Number(value).toFixed(value < 1 ? 4 : 2)}`);
const when = (iso) => (iso ? new Date(iso).toLocaleString() : '—');

async function copyText(text) {
  try {
    if (navigator.clipboard && window.isSecureContext) { await navigator.clipboard.writeText(text); return true; }
  } catch { /* fall back below */ }
  const ta = document.createElement('textarea');
  ta.value = text;
  ta.style.position = 'fixed';
  ta.style.opacity = '0';
  document.body.appendChild(ta);
  ta.select();
  let ok = false;
  try { ok = document.execCommand('copy'); } catch { ok = false; }
  ta.remove();
  return ok;
}

function CopyButton({ text }) {
  const [label, setLabel] = useState('Copy');
  const copy = async () => setLabel((await copyText(text)) ? 'Copied' : 'Press Ctrl+C');
  return html`<button type="button" onClick=${copy} aria-live="polite">${label}</button>`;
}

function SignIn() {
  return html`<div class="signin">
    <h1>Tollgate portal</h1>
    <p>Sign in with your organisation's identity provider to see your budget, requests and API keys.</p>
    <p><a class="button" href="/portal/auth/login">Sign in</a></p>
    <p class="muted">If signing in says it is not configured, single sign-on is not set up on this gateway yet: ask an administrator.</p>
  </div>`;
}

function Budget({ me }) {
  const budget = me.budget;
  const spent = budget ? budget.spent_usd : me.usage.cost_usd;
  const share = budget && budget.limit_usd ? Math.min(100, (100 * budget.spent_usd) / budget.limit_usd) : null;
  return html`<section aria-label="Budget">
    <h2>Budget and spend</h2>
    <div class="figures">
      <div class="figure"><div class="muted">Budget</div><div class="value" data-testid="budget-limit">${budget ? (budget.limit_usd === null ? 'Unlimited' : usd(budget.limit_usd)) : '—'}</div></div>
      <div class="figure"><div class="muted">Spent this period</div><div class="value" data-testid="budget-spent">${usd(spent)}</div></div>
      <div class="figure"><div class="muted">Remaining</div><div class="value">${budget && budget.remaining_usd !== null ? usd(budget.remaining_usd) : '—'}</div></div>
      <div class="figure"><div class="muted">Requests</div><div class="value">${me.usage.requests}</div></div>
      <div class="figure"><div class="muted">Period</div><div class="value">${budget ? budget.period : '—'}</div><div class="muted">${budget?.resets_at ? `resets ${when(budget.resets_at)}` : ''}</div></div>
    </div>
    ${share !== null && html`<div class="bar" role="progressbar" aria-valuenow=${Math.round(share)} aria-valuemin="0" aria-valuemax="100"><div style=${`width:${share}%`}></div></div>`}
  </section>`;
}

function Keys({ onChange }) {
  const [keys, setKeys] = useState(null);
  const [name, setName] = useState('');
  const [created, setCreated] = useState(null);
  const [error, setError] = useState(null);
  const load = useCallback(() => api('GET', '/keys').then((r) => setKeys(r.data), (e) => setError(e.message)), []);
  useEffect(() => { load(); }, [load]);
  const act = (work) => async (event) => {
    event?.preventDefault?.();
    setError(null);
    try { await work(); await load(); onChange(); } catch (e) { setError(e.message); }
  };
  const create = act(async () => {
    const key = await api('POST', '/keys', { name: name.trim() });
    setCreated(key);
    setName('');
  });
  const rename = (key) => act(async () => {
    const next = window.prompt('New name for this key', key.name ?? '');
    if (next && next.trim()) await api('PATCH', `/keys/${key.id}`, { name: next.trim() });
  });
  const revoke = (key) => act(async () => {
    if (window.confirm(`Revoke "${key.name ?? key.key_prefix}"? Programs using it stop working at once.`)) await api('DELETE', `/keys/${key.id}`);
  });
  return html`<section aria-label="API keys">
    <h2>API keys</h2>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    <form class="inline" onSubmit=${create}>
      <input aria-label="Key name" placeholder="Name, e.g. laptop" value=${name} maxlength="100" required onInput=${(e) => setName(e.target.value)} />
      <button class="primary" type="submit">Create key</button>
    </form>
    ${created && html`<div class="new-key" data-testid="new-key">
      <strong>Your new key "${created.name}". Copy it now: it is shown only once.</strong>
      <code data-testid="new-key-value">${created.key}</code>
      <div><${CopyButton} text=${created.key} /> <button type="button" onClick=${() => setCreated(null)}>Done</button></div>
    </div>`}
    ${keys === null ? html`<p class="muted">Loading…</p>` : keys.length === 0 ? html`<p class="muted">No keys yet.</p>` : html`<table data-testid="keys">
      <thead><tr><th>Name</th><th>Key</th><th>Status</th><th>Created</th><th>Last used</th><th></th></tr></thead>
      <tbody>${keys.map((k) => html`<tr key=${k.id}>
        <td>${k.name ?? html`<span class="muted">unnamed</span>`}</td><td class="mono">${k.key_prefix}…</td>
        <td class=${`status-${k.status}`}>${k.status}</td><td>${when(k.created_at)}</td><td>${when(k.last_used_at)}</td>
        <td>${k.status === 'active' && html`<button type="button" onClick=${rename(k)}>Rename</button> <button type="button" class="danger" onClick=${revoke(k)}>Revoke</button>`}</td>
      </tr>`)}</tbody></table>`}
  </section>`;
}

function Requests({ version }) {
  const [page, setPage] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => { api('GET', '/requests?limit=50').then(setPage, (e) => setError(e.message)); }, [version]);
  return html`<section aria-label="Requests">
    <h2>Your recent requests</h2>
    ${error && html`<p class="error" role="alert">${error}</p>`}
    ${page === null ? html`<p class="muted">Loading…</p>` : page.data.length === 0 ? html`<p class="muted">No requests yet.</p>` : html`<table data-testid="requests">
      <thead><tr><th>Time</th><th>Model</th><th>Key</th><th>Status</th><th>Tokens in / out</th><th>Cost</th></tr></thead>
      <tbody>${page.data.map((r) => html`<tr key=${r.id}>
        <td>${when(r.created_at)}</td><td class="mono">${r.model_served ?? r.model_requested ?? '—'}</td><td>${r.api_key_name ?? r.api_key_prefix ?? '—'}</td>
        <td>${r.status}${r.error_code ? ` ${r.error_code}` : ''}</td><td>${r.prompt_tokens ?? '—'} / ${r.completion_tokens ?? '—'}</td><td>${usd(r.cost_usd)}</td>
      </tr>`)}</tbody></table>`}
  </section>`;
}

function Models() {
  const [models, setModels] = useState(null);
  useEffect(() => { api('GET', '/models').then((r) => setModels(r.data), () => setModels([])); }, []);
  return html`<section aria-label="Models">
    <h2>Models you may use</h2>
    ${models === null ? html`<p class="muted">Loading…</p>` : models.length === 0 ? html`<p class="muted">No models are listed yet.</p>` : html`<table data-testid="models">
      <thead><tr><th>Model id</th><th>Name</th></tr></thead>
      <tbody>${models.map((m) => html`<tr key=${m.id}><td class="mono">${m.id}</td><td>${m.display_name}</td></tr>`)}</tbody></table>`}
  </section>`;
}

function Snippets() {
  const [data, setData] = useState(null);
  useEffect(() => { api('GET', '/snippets').then(setData, () => setData(null)); }, []);
  if (!data) return null;
  return html`<section aria-label="Connect your tools">
    <h2>Connect your tools</h2>
    <p>OpenAI-compatible base URL: <code>${data.base_urls.openai}</code> <${CopyButton} text=${data.base_urls.openai} /></p>
    <p>Anthropic base URL: <code>${data.base_urls.anthropic}</code> <${CopyButton} text=${data.base_urls.anthropic} /></p>
    ${data.snippets.map((s) => html`<div key=${s.id}><strong>${s.title}</strong> <${CopyButton} text=${s.text} /><pre>${s.text}</pre></div>`)}
  </section>`;
}

function Portal({ user, onSignedOut }) {
  const [me, setMe] = useState(null);
  const [version, setVersion] = useState(0);
  const [error, setError] = useState(null);
  useEffect(() => { api('GET', '/me').then(setMe, (e) => (e.status === 401 ? onSignedOut() : setError(e.message))); }, [version]);
  const logout = async () => { await api('POST', '/logout'); onSignedOut(); };
  return html`<div>
    <header><h1>Tollgate portal</h1><div><span class="muted">${user.name}${user.email ? ` · ${user.email}` : ''}</span> <button type="button" onClick=${logout}>Sign out</button></div></header>
    <main>
      ${error && html`<p class="error" role="alert">${error}</p>`}
      ${me ? html`<${Budget} me=${me} />` : html`<p class="muted">Loading…</p>`}
      <${Keys} onChange=${() => setVersion((v) => v + 1)} />
      <${Requests} version=${version} />
      <${Models} />
      <${Snippets} />
    </main>
  </div>`;
}

function App() {
  const [user, setUser] = useState(undefined);
  useEffect(() => { api('GET', '/session').then((r) => setUser(r.user), () => setUser(null)); }, []);
  if (user === undefined) return html`<p class="boot">Loading…</p>`;
  return user ? html`<${Portal} user=${user} onSignedOut=${() => setUser(null)} />` : html`<${SignIn} />`;
}

render(html`<${App} />`, document.getElementById('app'));
