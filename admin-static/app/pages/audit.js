// The audit log: who changed what, when and from where (GET /audit), newest first, filtered by actor,
// action, object type and UTC days, with the chain check (GET /audit/verify) and a CSV export of the
// same filter. Filters live in the URL hash, as on the usage-log page.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, query } from '../api.js';
import { html, PageHeader, Card, Spinner, ErrorBox, EmptyState, Field, Badge, Pager, useAsync, formatDateTime, formatNumber } from '../components.js';

const FILTER_KEYS = ['actor', 'action', 'object_type', 'from', 'to'];
const PAGE_SIZE = 50;

function pickFilters(q) {
  const f = {};
  for (const k of FILTER_KEYS) if (q[k]) f[k] = q[k];
  return f;
}

function writeFilters(filters) {
  location.hash = `#/audit${query(filters)}`;
}

/** A UTC day (`YYYY-MM-DD`) as the API's bounds: `to` is inclusive here, exclusive there. */
function apiFilters(filters) {
  const out = { ...filters };
  if (out.to) out.to = new Date(Date.parse(`${out.to}T00:00:00Z`) + 86_400_000).toISOString();
  return out;
}

function TextFilter({ id, label, value, placeholder, onSet }) {
  const [text, setText] = useState(value ?? '');
  const timer = useRef(0);
  useEffect(() => setText(value ?? ''), [value]);
  useEffect(() => () => clearTimeout(timer.current), []);
  const onInput = (e) => {
    const next = e.currentTarget.value;
    setText(next);
    clearTimeout(timer.current);
    timer.current = setTimeout(() => onSet(next.trim()), 450);
  };
  return html`<${Field} label=${label} id=${id}>
    <input id=${id} type="search" placeholder=${placeholder} value=${text} onInput=${onInput} autocomplete="off" />
  <//>`;
}

function Filters({ filters }) {
  const set = (patch) => writeFilters({ ...filters, ...patch });
  return html`<div class="card filters"><form class="filter-grid" onSubmit=${(e) => e.preventDefault()}>
    <${TextFilter} id="f-actor" label="Actor" value=${filters.actor} placeholder="admin, cli:root" onSet=${(v) => set({ actor: v })} />
    <${TextFilter} id="f-action" label="Action" value=${filters.action} placeholder="users.update, users.*" onSet=${(v) => set({ action: v })} />
    <${TextFilter} id="f-object" label="Object type" value=${filters.object_type} placeholder="user, key, price" onSet=${(v) => set({ object_type: v })} />
    <${Field} label="From" id="f-from" class="field-date">
      <input id="f-from" type="date" value=${filters.from ?? ''} onChange=${(e) => set({ from: e.currentTarget.value })} />
    <//>
    <${Field} label="To" id="f-to" class="field-date">
      <input id="f-to" type="date" value=${filters.to ?? ''} onChange=${(e) => set({ to: e.currentTarget.value })} />
    <//>
  </form></div>`;
}

function Change({ value }) {
  if (value === null || value === undefined) return html`<span class="muted">—</span>`;
  return html`<details><summary class="mono">${Object.keys(value).length} fields</summary><pre class="mono">${JSON.stringify(value, null, 2)}</pre></details>`;
}

function AuditTable({ rows }) {
  return html`<div class="table-wrap"><table class="table">
    <thead><tr><th>#</th><th>Time</th><th>Actor</th><th>Address</th><th>Action</th><th>Object</th><th>Before</th><th>After</th></tr></thead>
    <tbody>${rows.map((r) => html`<tr key=${r.id} data-testid="audit-row">
      <td class="mono">${r.id}</td>
      <td title=${r.at}>${formatDateTime(r.at)}</td>
      <td>${r.actor}${r.role && html`<span class="cell-sub">${r.role}</span>`}</td>
      <td class="mono">${r.ip ?? html`<span class="muted">—</span>`}</td>
      <td class="mono" data-testid="audit-action">${r.action}</td>
      <td>${r.object_type ?? ''}${r.object_id !== null && html`<span class="cell-sub mono">${r.object_id}</span>`}</td>
      <td><${Change} value=${r.before} /></td>
      <td><${Change} value=${r.after} /></td>
    </tr>`)}</tbody>
  </table></div>`;
}

function ChainStatus() {
  const check = useAsync(() => api('GET', '/audit/verify'), []);
  if (!check.data) return null;
  return html`<span data-testid="audit-chain">${check.data.ok
    ? html`<${Badge} tone="ok">${formatNumber(check.data.rows)} rows, chain intact<//>`
    : html`<${Badge} tone="err" title=${check.data.reason}>chain broken at row ${check.data.firstBadId}<//>`}</span>`;
}

/** @param {{me: any, query: Record<string,string>}} props */
export function AuditPage({ query: q = {} }) {
  const filters = pickFilters(q);
  const filterKey = query(apiFilters(filters));
  const [paging, setPaging] = useState({ filterKey, cursors: [null], index: 0 });
  const page = paging.filterKey === filterKey ? paging : { filterKey, cursors: [null], index: 0 };
  const cursor = page.cursors[page.index];
  const result = useAsync(() => api('GET', `/audit${query({ ...apiFilters(filters), limit: PAGE_SIZE, cursor })}`), [filterKey, cursor]);
  const data = result.data;

  const older = () => data?.next_cursor && setPaging({ ...page, cursors: [...page.cursors.slice(0, page.index + 1), data.next_cursor], index: page.index + 1 });
  const newer = () => page.index > 0 && setPaging({ ...page, index: page.index - 1 });
  const actions = html`<${ChainStatus} />
    ${Object.keys(filters).length > 0 && html`<button type="button" class="btn btn-ghost" onClick=${() => writeFilters({})}>Clear filters</button>`}
    <a class="btn" href=${`/admin/api/audit.csv${filterKey}`} download="tollgate-audit.csv" data-testid="audit-csv">Export CSV</a>`;

  let body;
  if (result.error) body = html`<div style="padding:16px"><${ErrorBox} error=${result.error} onRetry=${result.reload} /></div>`;
  else if (!data) body = html`<${Spinner} label="Loading the audit log…" />`;
  else if (data.data.length === 0) body = html`<${EmptyState} title="No audit rows match" hint="Every change made through the admin UI, its API or the CLI is recorded here." />`;
  else {
    const from = page.index * PAGE_SIZE + 1;
    body = html`<div>
      <${AuditTable} rows=${data.data} />
      <${Pager} hasPrev=${page.index > 0} hasNext=${Boolean(data.next_cursor)} onPrev=${newer} onNext=${older}
        prevLabel="Newer" nextLabel="Older" label=${`Showing ${formatNumber(from)}–${formatNumber(from + data.data.length - 1)}, newest first`} />
    </div>`;
  }
  return html`<div class="page">
    <${PageHeader} title="Audit log" subtitle="Who changed what, when and from where; each row chained to the previous by SHA-256. Dates are UTC days." actions=${actions} />
    <${Filters} filters=${filters} />
    <${Card} flush>${body}<//>
  </div>`;
}
