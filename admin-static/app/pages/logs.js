// Usage logs: filterable, keyset-paged request history (GET /logs), a detail dialog per row and a
// CSV export of the same filter. Filters live in the URL hash so a view can be shared and reloaded.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, query } from '../api.js';
import {
  html, PageHeader, Card, Spinner, ErrorBox, EmptyState, Field, Badge, Modal, CopyButton, Pager, useAsync,
  formatUsd, formatNumber, formatDateTime, formatMs,
} from '../components.js';

const FILTER_KEYS = ['user_id', 'key_id', 'provider', 'model', 'tag', 'status', 'from', 'to'];
const STATUSES = [
  ['', 'All statuses'], ['2xx', '2xx success'], ['4xx', '4xx client'], ['5xx', '5xx server'],
  ['error', 'Any error'], ['401', '401 auth'], ['402', '402 budget'], ['429', '429 rate limit'],
];
const PAGE_SIZE = 50;

function pickFilters(q) {
  const f = {};
  for (const k of FILTER_KEYS) if (q[k]) f[k] = q[k];
  return f;
}

function writeFilters(filters) {
  location.hash = `#/logs${query(filters)}`;
}

function statusTone(status) {
  if (status >= 500 || status === 0) return 'err';
  if (status >= 400) return 'warn';
  return 'ok';
}

/** Table time with its date, "Nov 20 14:03:07" (the year in the tooltip): rows of several days sit side by side. */
function shortTime(iso) {
  const d = new Date(iso);
  const time = d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  return `${d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })} ${time}`;
}

/**
 * Where the row's token counts came from: the provider's report, the gateway's estimate, or nowhere
 * (a request refused before any provider answered: a budget's 402, an unknown model's 404).
 */
function usageSource(row) {
  if (row.usage_estimated) return html`<${Badge} tone="warn">estimated locally<//>`;
  if (row.prompt_tokens === null && row.completion_tokens === null) {
    // `attempts` comes with the detail (GET /logs/:id), not with the listed row.
    if (row.attempts === undefined) return null;
    return html`<span class="muted">none: ${row.attempts ? 'the provider reported no usage' : 'the request was not sent to a provider'}</span>`;
  }
  return 'reported by the provider';
}

function Owner({ row }) {
  const who = row.user_id === null
    ? html`<span class="deleted-user">deleted user</span>`
    : html`<a href=${`#/users/${row.user_id}`} onClick=${(e) => e.stopPropagation()}>${row.user_name ?? `user ${row.user_id}`}</a>`;
  return html`${who}<span class="cell-sub mono" title=${row.api_key_name ? `Key “${row.api_key_name}”` : undefined}>${row.api_key_prefix ?? 'no key'}</span>`;
}

function ModelCell({ row }) {
  const served = row.model_served && row.model_served !== row.model_requested;
  return html`<span class="mono" title=${row.model_requested}>${row.model_requested ?? '—'}</span>${served &&
    html`<span class="cell-sub mono" title=${`Served as ${row.model_served}`}><span class="arrow" aria-hidden="true">→</span><span class="sr-only">served as </span>${row.model_served}</span>`}`;
}

function Tokens({ row }) {
  if (row.prompt_tokens === null && row.completion_tokens === null) return html`<span class="muted">—</span>`;
  return html`${formatNumber(row.prompt_tokens ?? 0)}<span class="muted"> / </span>${formatNumber(row.completion_tokens ?? 0)}${row.usage_estimated &&
    html`<abbr class="est" title="Estimated locally: the provider reported no usage">est.</abbr>`}`;
}

function Cost({ row }) {
  if (row.unpriced) return html`<${Badge} tone="warn" title="No price for this model when the request ran">unpriced<//>`;
  return row.cost_usd === null ? html`<span class="muted">—</span>` : formatUsd(row.cost_usd);
}

function StatusBadge({ row }) {
  return html`<${Badge} tone=${statusTone(row.status)} title=${row.error_code ?? undefined}>${row.status}<//>`;
}

function Filters({ filters, me }) {
  const users = useAsync(() => api('GET', '/users?limit=200&sort=name&order=asc'), []);
  const keys = useAsync(() => (filters.user_id ? api('GET', `/users/${encodeURIComponent(filters.user_id)}/keys`) : Promise.resolve({ data: [] })), [filters.user_id]);
  const [model, setModel] = useState(filters.model ?? '');
  const timer = useRef(0);
  useEffect(() => setModel(filters.model ?? ''), [filters.model]);
  useEffect(() => () => clearTimeout(timer.current), []);

  const set = (patch) => writeFilters({ ...filters, ...patch });
  function onModel(e) {
    const value = e.currentTarget.value;
    setModel(value);
    clearTimeout(timer.current);
    timer.current = setTimeout(() => set({ model: value.trim() }), 450);
  }
  const userList = users.data?.data ?? [];
  const knownUser = !filters.user_id || userList.some((u) => String(u.id) === filters.user_id);
  const providers = me?.gateway?.providers ?? [];

  return html`<div class="card filters"><form class="filter-grid" onSubmit=${(e) => { e.preventDefault(); clearTimeout(timer.current); set({ model: model.trim() }); }}>
    <${Field} label="User" id="f-user">
      <select id="f-user" value=${filters.user_id ?? ''} onChange=${(e) => set({ user_id: e.currentTarget.value, key_id: '' })}>
        <option value="">All users</option>
        ${!knownUser && html`<option value=${filters.user_id}>User #${filters.user_id}</option>`}
        ${userList.map((u) => html`<option value=${String(u.id)}>${u.name}</option>`)}
      </select>
    <//>
    <${Field} label="API key" id="f-key">
      <select id="f-key" value=${filters.key_id ?? ''} disabled=${!filters.user_id}
        title=${filters.user_id ? undefined : 'Choose a user first'} onChange=${(e) => set({ key_id: e.currentTarget.value })}>
        <option value="">All keys</option>
        ${(keys.data?.data ?? []).map((k) => html`<option value=${String(k.id)}>${k.name || 'unnamed'} · ${k.key_prefix}${k.status !== 'active' ? ` (${k.status})` : ''}</option>`)}
      </select>
    <//>
    <${Field} label="Provider" id="f-provider">
      <select id="f-provider" value=${filters.provider ?? ''} onChange=${(e) => set({ provider: e.currentTarget.value })}>
        <option value="">All providers</option>
        ${providers.map((p) => html`<option value=${p.id}>${p.name || p.id}</option>`)}
      </select>
    <//>
    <${Field} label="Model" id="f-model" class="field-model">
      <input id="f-model" type="search" placeholder="e.g. gpt-4o-mini" value=${model} onInput=${onModel} autocomplete="off" />
    <//>
    <${Field} label="Key tag" id="f-tag" class="field-model">
      <input id="f-tag" type="search" placeholder="e.g. project=search" value=${filters.tag ?? ''} autocomplete="off"
        onChange=${(e) => set({ tag: e.currentTarget.value.trim() })} />
    <//>
    <${Field} label="Status" id="f-status">
      <select id="f-status" value=${filters.status ?? ''} onChange=${(e) => set({ status: e.currentTarget.value })}>
        ${STATUSES.map(([v, l]) => html`<option value=${v}>${l}</option>`)}
      </select>
    <//>
    <${Field} label="From" id="f-from" class="field-date">
      <input id="f-from" type="date" value=${filters.from ?? ''} max=${filters.to || undefined} onChange=${(e) => set({ from: e.currentTarget.value })} />
    <//>
    <${Field} label="To" id="f-to" class="field-date">
      <input id="f-to" type="date" value=${filters.to ?? ''} min=${filters.from || undefined} onChange=${(e) => set({ to: e.currentTarget.value })} />
    <//>
  </form></div>`;
}

// The list row at once, then its detail (GET /logs/:id adds the upstream attempts, the usage report and the billed price).
function Detail({ row: listed, onClose }) {
  const detail = useAsync(() => api('GET', `/logs/${listed.id}`), [listed.id]);
  const row = detail.data ?? listed;
  const item = (label, value) => html`<dt>${label}</dt><dd>${value ?? html`<span class="muted">—</span>`}</dd>`;
  const section = (title, items) => html`<section><h3 class="dl-section">${title}</h3><dl class="dl">${items}</dl></section>`;
  const footer = html`<${CopyButton} text=${JSON.stringify(row, null, 2)} label="Copy JSON" class="btn" />
    <button type="button" class="btn btn-primary" onClick=${onClose}>Close</button>`;
  return html`<${Modal} title="Request details" onClose=${onClose} footer=${footer} size="lg">
    <div class="detail-summary">
      <div class="inline-row"><span class="mono detail-id" data-testid="log-request-id">${row.request_id}</span><${CopyButton} text=${row.request_id} label="Copy ID" /></div>
      <div class="inline-row muted"><${StatusBadge} row=${row} />${row.error_code && html`<span class="mono">${row.error_code}</span>`}
        <span>${formatDateTime(row.created_at)}</span><span class="mono">${row.created_at}</span></div>
    </div>
    <div class="detail-grid">
      ${section('Caller', html`
        ${item('User', row.user_id === null ? html`<span class="deleted-user">deleted user</span>` : html`<a href=${`#/users/${row.user_id}`} onClick=${onClose}>${row.user_name}</a> <span class="muted">#${row.user_id}</span>`)}
        ${item('API key', row.api_key_id === null ? null : html`<span class="mono">${row.api_key_prefix}</span>${row.api_key_name && html` · ${row.api_key_name}`} <span class="muted">#${row.api_key_id}</span>`)}
        ${item('Key tags', row.tags && html`<span class="mono">${Object.entries(row.tags).map(([n, v]) => `${n}=${v}`).join(', ')}</span>`)}
`)}
      ${section('Model', html`
        ${item('Endpoint', row.endpoint && html`<span class="mono">${row.endpoint}</span>`)}
        ${item('Provider', row.provider)}
        ${item('Requested', row.model_requested && html`<span class="mono">${row.model_requested}</span>`)}
        ${item('Served', row.model_served && html`<span class="mono">${row.model_served}</span>`)}`)}
      ${section('Usage and cost', html`
        ${item('Prompt tokens', formatNumber(row.prompt_tokens))}
        ${item('Completion tokens', formatNumber(row.completion_tokens))}
        ${item('Cached tokens', formatNumber(row.cached_tokens))}
        ${item('Cache write tokens', formatNumber(row.cache_write_tokens))}
        ${item('Usage source', usageSource(row) && html`<span data-testid="log-usage-source">${usageSource(row)}</span>`)}
        ${item('Cost', row.unpriced ? html`<${Badge} tone="warn">unpriced<//>` : row.cost_usd === null ? null : formatUsd(row.cost_usd))}
        ${item('Cost (nano-USD)', row.cost_nanos === null ? null : html`<span class="mono">${formatNumber(row.cost_nanos)}</span>`)}
        ${item('Billed at', row.billed_price && html`<span data-testid="log-billed-price">$${row.billed_price.input_price_per_million} in / $${row.billed_price.output_price_per_million} out per M <span class="muted">(${row.billed_price.source})</span></span>`)}`)}
      ${section('Timing', html`
        ${item('Latency', formatMs(row.latency_ms))}
        ${item('Time to first token', formatMs(row.ttft_ms))}
        ${item('Stream', row.stream ? 'yes' : 'no')}
        ${item('Log row', html`<span class="mono">#${row.id}</span>`)}`)}
    </div>
    ${row.attempts && html`<${Attempts} attempts=${row.attempts} />`}
    ${row.usage_reported && html`<details data-testid="log-usage-reported"><summary>Usage as the upstream reported it</summary><pre class="mono">${JSON.stringify(row.usage_reported, null, 2)}</pre></details>`}
  <//>`;
}

// Every upstream attempt of the request (retries and fallbacks before the first byte), oldest first.
function Attempts({ attempts }) {
  return html`<section data-testid="log-attempts"><h3 class="dl-section">Upstream attempts (${attempts.length})</h3>
    <div class="table-wrap"><table class="table">
      <thead><tr><th>#</th><th>Deployment</th><th>Status</th><th>Outcome</th><th class="num">Latency</th></tr></thead>
      <tbody>${attempts.map((a, i) => html`<tr key=${i}>
        <td>${i + 1}</td>
        <td class="mono">${a.provider}/${a.model}</td>
        <td>${a.status ?? html`<span class="muted">no answer</span>`}</td>
        <td>${a.error_code ? html`<${Badge} tone="warn">${a.error_code}<//>` : html`<${Badge} tone="ok">served<//>`}</td>
        <td class="num">${formatMs(a.latency_ms)}</td>
      </tr>`)}</tbody>
    </table></div>
  </section>`;
}

function LogTable({ rows, onOpen }) {
  return html`<div class="table-wrap"><table class="table log-table">
    <thead><tr>
      <th>Time</th><th>User · key</th><th>Model</th><th>Status</th>
      <th class="num">Tokens in / out</th><th class="num">Cost</th><th class="num">Latency</th><th class="num">TTFT</th>
    </tr></thead>
    <tbody>${rows.map((r) => html`<tr key=${r.id} class="clickable" data-testid="log-row" tabindex="0"
        onClick=${() => onOpen(r)} onKeyDown=${(e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); onOpen(r); } }}>
      <td title=${formatDateTime(r.created_at)}>${shortTime(r.created_at)}</td>
      <td><${Owner} row=${r} /></td>
      <td class="cell-model"><${ModelCell} row=${r} /></td>
      <td><${StatusBadge} row=${r} /></td>
      <td class="num"><${Tokens} row=${r} /></td>
      <td class="num"><${Cost} row=${r} /></td>
      <td class="num">${formatMs(r.latency_ms)}</td>
      <td class="num">${formatMs(r.ttft_ms)}</td>
    </tr>`)}</tbody>
  </table></div>`;
}

/** @param {{me: any, query: Record<string,string>}} props */
export function LogsPage({ me, query: q = {} }) {
  const filters = pickFilters(q);
  const filterKey = query(filters);
  const [paging, setPaging] = useState({ filterKey, cursors: [null], index: 0 });
  // A filter change starts again at the newest page.
  const page = paging.filterKey === filterKey ? paging : { filterKey, cursors: [null], index: 0 };
  const cursor = page.cursors[page.index];
  const [open, setOpen] = useState(null);
  const last = useRef(null);

  const result = useAsync(() => api('GET', `/logs${query({ ...filters, limit: PAGE_SIZE, cursor })}`), [filterKey, cursor]);
  if (result.data) last.current = result.data;
  const data = result.data ?? (result.loading ? last.current : null);

  const go = (next) => { setPaging(next); window.scrollTo({ top: 0 }); };
  const older = () => data?.next_cursor && go({ ...page, cursors: [...page.cursors.slice(0, page.index + 1), data.next_cursor], index: page.index + 1 });
  const newer = () => page.index > 0 && go({ ...page, index: page.index - 1 });
  const csvHref = `/admin/api/logs.csv${filterKey}`;
  const actions = html`
    ${Object.keys(filters).length > 0 && html`<button type="button" class="btn btn-ghost" onClick=${() => writeFilters({})}>Clear filters</button>`}
    <button type="button" class="btn" onClick=${result.reload} disabled=${result.loading}>
      <svg viewBox="0 0 24 24" aria-hidden="true"><path d="M20 11a8 8 0 1 0-2.3 5.7M20 4v7h-7"/></svg>Refresh</button>
    <a class="btn" href=${csvHref} download="tollgate-usage.csv">
      <svg viewBox="0 0 24 24" aria-hidden="true"><path d="M12 4v11m0 0-4-4m4 4 4-4M5 20h14"/></svg>Export CSV</a>`;

  let body;
  if (result.error) body = html`<div style="padding:16px"><${ErrorBox} error=${result.error} onRetry=${result.reload} /></div>`;
  else if (!data) body = html`<${Spinner} label="Loading requests…" />`;
  else if (data.data.length === 0) {
    body = Object.keys(filters).length
      ? html`<${EmptyState} title="No requests match these filters" hint="Widen the date range or clear a filter."
          icon=${html`<svg viewBox="0 0 24 24"><path d="M4 5h16l-6 7.5V19l-4-2v-4.5z"/></svg>`}
          action=${html`<button type="button" class="btn" onClick=${() => writeFilters({})}>Clear filters</button>`} />`
      : html`<${EmptyState} title="No requests yet" hint="Every call to /api/v1 through the gateway is logged here with its tokens, cost and latency."
          action=${html`<a class="btn" href="#/users">Create an API key</a>`} />`;
  } else {
    const from = page.index * PAGE_SIZE + 1;
    body = html`<div class=${result.loading ? 'loading-fade' : ''}>
      <${LogTable} rows=${data.data} onOpen=${setOpen} />
      <${Pager} hasPrev=${page.index > 0} hasNext=${Boolean(data.next_cursor)} onPrev=${newer} onNext=${older}
        prevLabel="Newer" nextLabel="Older" label=${`Showing ${formatNumber(from)}–${formatNumber(from + data.data.length - 1)}, newest first`} />
    </div>`;
  }

  return html`<div class="page">
    <${PageHeader} title="Usage logs" subtitle="Every request through the gateway, newest first. Dates are UTC days." actions=${actions} />
    <${Filters} filters=${filters} me=${me} />
    <${Card} flush>${body}<//>
    ${open && html`<${Detail} row=${open} onClose=${() => setOpen(null)} />`}
  </div>`;
}
