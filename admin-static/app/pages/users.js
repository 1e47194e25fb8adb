/**
 * Gateway users: a searchable, sortable, paged table with each user's spend against budget,
 * and the "New user" form (which opens the new user's page when saved).
 */
import { useState } from 'preact/hooks';
import { api, query } from '../api.js';
import {
  html, PageHeader, Card, Spinner, ErrorBox, EmptyState, Badge, SpendBar, Pager, useAsync,
  formatNumber, formatDate, formatRelative, formatUsd,
} from '../components.js';
import { UserFormModal } from './users/user-form.js';
import { SortHeader } from './users/sort-header.js';
import { useDebounced } from './users/use-debounced.js';

const PAGE_SIZE = 25;
/** Sorting a new column starts where it is most useful: names A→Z, money and dates biggest/newest first. */
const FIRST_ORDER = { name: 'asc', budget: 'desc', spend: 'desc', created_at: 'desc' };
const PERIOD_LABEL = { daily: 'per day', weekly: 'per week', monthly: 'per month', never: 'lifetime' };

function limitsText(user) {
  if (user.rpm == null && user.tpm == null) return html`<span class="muted">—</span>`;
  return html`<span>${user.rpm == null ? '∞' : formatNumber(user.rpm)}</span><span class="muted"> / </span><span>${user.tpm == null ? '∞' : formatNumber(user.tpm)}</span>`;
}

function UserRow({ user }) {
  const b = user.budget;
  return html`<tr>
    <td>
      <a class="row-link" href=${`#/users/${user.id}`}>${user.name}</a>
      ${user.email && html`<div class="muted small">${user.email}</div>`}
    </td>
    <td>${user.disabled ? html`<${Badge} tone="muted">disabled<//>` : html`<${Badge} tone="ok">active<//>`}</td>
    <td class="num">
      ${b?.limit_usd == null ? html`<span class="muted">No limit</span>` : formatUsd(b.limit_usd)}
      <div class="muted small">${PERIOD_LABEL[user.budget_period] ?? user.budget_period}</div>
    </td>
    <td class="cell-spend"><${SpendBar} spent=${b?.spent_usd ?? 0} limit=${b?.limit_usd} compact /></td>
    <td class="num nowrap">${limitsText(user)}</td>
    <td class="num">${formatNumber(user.key_count)}</td>
    <td class="nowrap" title=${user.last_used_at || ''}>${user.last_used_at ? formatRelative(user.last_used_at) : html`<span class="muted">never</span>`}</td>
    <td class="nowrap">${formatDate(user.created_at)}</td>
  </tr>`;
}

function UsersTable({ rows, sort, onSort }) {
  const h = (label, field, numeric) => html`<${SortHeader} label=${label} field=${field} sort=${sort} onSort=${onSort} numeric=${numeric} />`;
  return html`<div class="table-wrap">
    <table class="table">
      <thead>
        <tr>
          ${h('Name', 'name')}
          <th scope="col">Status</th>
          ${h('Budget', 'budget', true)}
          ${h('Spend', 'spend')}
          <th scope="col" class="num" title="Requests per minute / tokens per minute">RPM / TPM</th>
          <th scope="col" class="num">Keys</th>
          <th scope="col">Last used</th>
          ${h('Created', 'created_at')}
        </tr>
      </thead>
      <tbody>
        ${rows.map((u) => html`<${UserRow} key=${u.id} user=${u} />`)}
      </tbody>
    </table>
  </div>`;
}

export function UsersPage() {
  const [search, setSearch] = useState('');
  const term = useDebounced(search.trim(), 250);
  const [sort, setSort] = useState({ field: 'name', order: 'asc' });
  const [creating, setCreating] = useState(false);
  // The offset belongs to the search term it was paged under: a new term starts on page one.
  const [paging, setPaging] = useState({ term: '', offset: 0 });
  const effectiveOffset = paging.term === term ? paging.offset : 0;
  const setOffset = (offset) => setPaging({ term, offset });

  const { data, error, loading, reload } = useAsync(
    () => api('GET', `/users${query({ search: term, sort: sort.field, order: sort.order, limit: PAGE_SIZE, offset: effectiveOffset })}`),
    [term, sort.field, sort.order, effectiveOffset],
  );

  function onSort(field) {
    setSort((s) => (s.field === field ? { field, order: s.order === 'asc' ? 'desc' : 'asc' } : { field, order: FIRST_ORDER[field] }));
    setOffset(0);
  }

  function onCreated(user) {
    setCreating(false);
    location.hash = `#/users/${user.id}`;
  }

  const newUserButton = html`<button type="button" class="btn btn-primary" onClick=${() => setCreating(true)}>New user</button>`;
  const total = data?.total ?? 0;
  const rows = data?.data ?? [];

  let body;
  if (error && !data) body = html`<${ErrorBox} error=${error} onRetry=${reload} />`;
  else if (!data) body = html`<${Spinner} label="Loading users…" />`;
  else if (total === 0 && !term)
    body = html`<${EmptyState}
      title="No gateway users yet"
      hint="A gateway user is a person, team or app. Give it a budget and rate limits, then create API keys for it."
      action=${html`<button type="button" class="btn btn-primary" onClick=${() => setCreating(true)}>Create the first user</button>`}
    />`;
  else if (rows.length === 0)
    body = html`<${EmptyState}
      title=${`No users match “${term}”`}
      hint="Search looks at names and emails."
      action=${html`<button type="button" class="btn" onClick=${() => setSearch('')}>Clear search</button>`}
    />`;
  else
    body = html`
      <${UsersTable} rows=${rows} sort=${sort} onSort=${onSort} />
      <${Pager}
        hasPrev=${effectiveOffset > 0}
        hasNext=${effectiveOffset + rows.length < total}
        onPrev=${() => setOffset(Math.max(0, effectiveOffset - PAGE_SIZE))}
        onNext=${() => setOffset(effectiveOffset + PAGE_SIZE)}
        label=${`${formatNumber(effectiveOffset + 1)}–${formatNumber(effectiveOffset + rows.length)} of ${formatNumber(total)}`}
      />`;

  return html`<div class="page">
    <${PageHeader}
      title="Users"
      subtitle="People, teams and apps that call the gateway, with their budgets and rate limits."
      actions=${newUserButton}
    />
    <${Card} flush>
      <div class="toolbar">
        <label class="sr-only" for="users-search">Search users</label>
        <input
          id="users-search"
          class="input search-input"
          type="search"
          placeholder="Search users by name or email"
          autocomplete="off"
          value=${search}
          onInput=${(e) => setSearch(e.currentTarget.value)}
        />
        ${loading && data && html`<${Spinner} inline label="Updating…" />`}
        ${data && html`<span class="muted toolbar-count">${formatNumber(total)} ${total === 1 ? 'user' : 'users'}</span>`}
      </div>
      ${error && data && html`<${ErrorBox} error=${error} onRetry=${reload} />`}
      ${body}
    <//>
    ${creating && html`<${UserFormModal} onClose=${() => setCreating(false)} onSaved=${onCreated} />`}
  </div>`;
}
