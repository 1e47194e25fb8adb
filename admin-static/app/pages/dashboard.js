// Dashboard: totals, latency percentiles and a per-day chart (per-hour for the last 24 hours) for a
// chosen period, plus who and what spends most, users near their budget and models served without a
// price (GET /stats), the budget alerts fired lately with their webhook delivery (GET /alerts), and
// the configured providers with who can use each (GET /session's gateway.providers).
import { api, query } from '../api.js';
import {
  html, PageHeader, Card, Spinner, ErrorBox, EmptyState, Field, Badge, SpendBar, useAsync,
  formatUsd, formatNumber, formatCompact, formatPercent, formatMs, formatRelative, formatDateTime,
} from '../components.js';
import { UsageChart, ChartLegend } from '../chart.js';

const PERIODS = [
  { value: '24h', label: 'Last 24 hours', days: 1, per: 'hour' },
  { value: '7d', label: 'Last 7 days', days: 7 },
  { value: '30d', label: 'Last 30 days', days: 30 },
  { value: '90d', label: 'Last 90 days', days: 90 },
];
const DAY_MS = 86_400_000;

function periodOf(value) {
  return PERIODS.find((p) => p.value === value) || PERIODS[2];
}

function setPeriod(value) {
  location.hash = value === '30d' ? '#/' : `#/?period=${value}`;
}

function Stat({ testid, label, value, foot, title }) {
  return html`<div class="stat" data-testid=${testid} title=${title}>
    <div class="stat-label">${label}</div>
    <div class="stat-value">${value}</div>
    ${foot !== undefined && html`<div class="stat-foot">${foot}</div>`}
  </div>`;
}

/** What the error rate counts (docs/admin-api.md "Dashboard"), as its tooltip. */
const ERRORS_TITLE = 'Errors: what the gateway or a provider failed (a 5xx, or a provider refusing the gateway\'s key, account or rate: 401, 402, 403, 429). '
  + 'Refusals of the client\'s own request are not errors: invalid requests, unknown models, bad Tollgate keys, budgets, the gateway\'s rate limits, clients that hung up.';

function Stats({ s }) {
  const t = s.totals;
  const errTone = t.error_rate >= 0.05 ? 'tone-err' : t.error_rate > 0 ? 'tone-warn' : '';
  return html`
    <div class="grid grid-4">
      <${Stat} testid="stat-requests" label="Requests" value=${formatNumber(t.requests)}
        foot=${`${formatNumber(t.errors)} ${t.errors === 1 ? 'error' : 'errors'}`} title=${ERRORS_TITLE} />
      <${Stat} testid="stat-tokens" label="Tokens" value=${formatCompact(t.total_tokens)} title=${`${formatNumber(t.total_tokens)} tokens`}
        foot=${`${formatCompact(t.prompt_tokens)} in · ${formatCompact(t.completion_tokens)} out`} />
      <${Stat} testid="stat-cost" label="Cost" value=${formatUsd(t.cost_usd)}
        foot=${t.requests ? `${formatUsd(t.cost_usd / t.requests)} per request` : 'no requests'} />
      <${Stat} testid="stat-error-rate" label="Error rate" title=${ERRORS_TITLE}
        value=${html`<span class=${errTone}>${formatPercent(t.error_rate)}</span>`}
        foot=${`${formatNumber(t.errors)} of ${formatNumber(t.requests)}; refusals not counted`} />
    </div>
    <div class="grid grid-4">
      <${Stat} testid="stat-latency-p50" label="Latency p50" value=${formatMs(s.latency_ms.p50)} foot="median, full response" />
      <${Stat} testid="stat-latency-p95" label="Latency p95" value=${formatMs(s.latency_ms.p95)} foot="95th percentile" />
      <${Stat} testid="stat-ttft-p50" label="Time to first token p50" value=${formatMs(s.ttft_ms.p50)} foot="median, streamed requests" />
      <${Stat} testid="stat-ttft-p95" label="Time to first token p95" value=${formatMs(s.ttft_ms.p95)} foot="95th percentile" />
    </div>`;
}

function UserName({ id, name }) {
  if (id === null || id === undefined) return html`<span class="deleted-user">deleted user</span>`;
  return html`<a href=${`#/users/${id}`}>${name ?? `user ${id}`}</a>`;
}

function TopUsers({ rows }) {
  return html`<${Card} title="Top users" flush>
    ${rows.length === 0
      ? html`<p class="muted" style="padding:16px 20px">No usage in this period.</p>`
      : html`<div class="table-wrap"><table class="table">
        <thead><tr><th>User</th><th class="num">Requests</th><th class="num">Tokens</th><th class="num">Cost</th></tr></thead>
        <tbody>${rows.map((r, i) => html`<tr key=${r.user_id ?? `deleted-${i}`}>
          <td><${UserName} id=${r.user_id} name=${r.user_name} /></td>
          <td class="num">${formatNumber(r.requests)}</td>
          <td class="num">${formatCompact(r.total_tokens)}</td>
          <td class="num">${formatUsd(r.cost_usd)}</td>
        </tr>`)}</tbody></table></div>`}
  <//>`;
}

function TopModels({ rows }) {
  return html`<${Card} title="Top models" flush>
    ${rows.length === 0
      ? html`<p class="muted" style="padding:16px 20px">No usage in this period.</p>`
      : html`<div class="table-wrap"><table class="table">
        <thead><tr><th>Model</th><th class="num">Requests</th><th class="num">Tokens</th><th class="num">Cost</th></tr></thead>
        <tbody>${rows.map((r) => html`<tr key=${`${r.provider}/${r.model}`}>
          <td><span class="mono">${r.model}</span> <span class="cell-sub">${r.provider}</span></td>
          <td class="num">${formatNumber(r.requests)}</td>
          <td class="num">${formatCompact(r.total_tokens)}</td>
          <td class="num">${formatUsd(r.cost_usd)}</td>
        </tr>`)}</tbody></table></div>`}
  <//>`;
}

function BudgetAlerts({ rows }) {
  return html`<${Card} title="Users near their budget" flush>
    ${rows.length === 0
      ? html`<p class="muted" style="padding:16px 20px">Every user is below 80 % of their budget.</p>`
      : html`<div class="table-wrap"><table class="table">
        <thead><tr><th>User</th><th>Spend this budget period</th></tr></thead>
        <tbody>${rows.map((r) => html`<tr key=${r.user_id}>
          <td><${UserName} id=${r.user_id} name=${r.user_name} />
            ${r.ratio >= 1 && html` <${Badge} tone="err">over budget<//>`}</td>
          <td style="min-width:220px"><${SpendBar} spent=${r.spent_usd} limit=${r.limit_usd} /></td>
        </tr>`)}</tbody></table></div>`}
  <//>`;
}

/** How each delivery state reads, and its badge tone. */
const DELIVERY = {
  delivered: { tone: 'ok', label: 'delivered' },
  pending: { tone: 'warn', label: 'pending' },
  failed: { tone: 'err', label: 'failed' },
  unsent: { tone: 'muted', label: 'no webhook' },
};

function Delivery({ alert: a }) {
  const d = DELIVERY[a.state] || { tone: 'muted', label: a.state };
  const tries = a.attempts === 1 ? '1 attempt' : `${a.attempts} attempts`;
  const title = a.state === 'delivered' ? `Delivered ${formatDateTime(a.delivered_at)} · ${tries}`
    : a.state === 'pending' && a.next_attempt_at ? `${tries} · next ${formatDateTime(a.next_attempt_at)}${a.last_error ? ` · ${a.last_error}` : ''}`
    : a.last_error ? `${tries} · ${a.last_error}` : tries;
  return html`<${Badge} tone=${d.tone} title=${title}>${d.label}<//>`;
}

function RecentAlerts({ state }) {
  const { data, error } = state;
  const rows = data ? data.data : [];
  return html`<${Card} title="Budget alerts sent" flush>
    ${error ? html`<p class="muted" style="padding:16px 20px">Alerts could not be loaded: ${error.message}</p>`
      : rows.length === 0
      ? html`<p class="muted" style="padding:16px 20px">No user has crossed an alert threshold yet (80 % and 100 % of the budget by default).</p>`
      : html`<div class="table-wrap"><table class="table" data-testid="recent-alerts">
        <thead><tr><th>User</th><th class="num">Threshold</th><th>Spend then</th><th>When</th><th>Webhook</th></tr></thead>
        <tbody>${rows.map((a) => html`<tr key=${a.id}>
          <td><${UserName} id=${a.user_id} name=${a.user_name} /></td>
          <td class="num">${a.threshold_percent} %</td>
          <td class="nowrap">${formatUsd(a.spent_usd)} of ${formatUsd(a.limit_usd)}</td>
          <td class="nowrap muted" title=${formatDateTime(a.fired_at)}>${formatRelative(a.fired_at)}</td>
          <td><${Delivery} alert=${a} /></td>
        </tr>`)}</tbody></table></div>`}
  <//>`;
}

function UnpricedModels({ rows }) {
  return html`<${Card} title="Unpriced models" flush>
    ${rows.length === 0
      ? html`<p class="muted" style="padding:16px 20px">Every model served in this period has a price.</p>`
      : html`<div class="table-wrap"><table class="table">
        <thead><tr><th>Model</th><th class="num">Requests</th><th>Last seen</th><th><span class="sr-only">Action</span></th></tr></thead>
        <tbody>${rows.map((r) => html`<tr key=${`${r.provider}/${r.model}`}>
          <td><span class="mono">${r.model}</span> <span class="cell-sub">${r.provider}</span></td>
          <td class="num">${formatNumber(r.requests)}</td>
          <td class="nowrap muted">${formatRelative(r.last_seen)}</td>
          <td class="num"><a class="btn btn-sm" href=${`#/pricing${query({ model: r.model, provider: r.provider })}`}>Set price</a></td>
        </tr>`)}</tbody></table></div>`}
  <//>`;
}

/** How a provider's `shared_key` reads, and its badge tone. */
const SHARED_KEY = {
  configured: { tone: 'ok', label: 'shared key', hint: 'Every user can call it with the gateway\'s key.' },
  missing: { tone: 'warn', label: 'users\' own keys only', hint: 'No shared key: only users with their own credential can call it.' },
  not_needed: { tone: 'info', label: 'no key needed', hint: 'It runs without a key (a local server).' },
};

function Providers({ providers }) {
  return html`<${Card} title="Providers" flush>
    ${providers.length === 0
      ? html`<p class="muted" style="padding:16px 20px">No provider is configured: list them in the provider-router's "providers" in the manifest.</p>`
      : html`<div class="table-wrap"><table class="table" data-testid="providers">
        <thead><tr><th>Provider</th><th>Model prefix</th><th>Who can use it</th></tr></thead>
        <tbody>${providers.map((p) => {
          const key = SHARED_KEY[p.shared_key] ?? { tone: 'muted', label: p.shared_key, hint: '' };
          return html`<tr key=${p.id} data-provider=${p.id}>
            <td>${p.name}</td>
            <td class="mono">${p.id}/</td>
            <td><${Badge} tone=${key.tone} title=${key.hint}>${key.label}<//></td>
          </tr>`;
        })}</tbody></table></div>`}
  <//>`;
}

function NoTraffic() {
  const example = `curl ${location.origin}/api/v1/chat/completions \\
  -H "Authorization: Bearer tg_YOUR_KEY" \\
  -H "Content-Type: application/json" \\
  -d '{"model": "gpt-4o-mini",
       "messages": [{"role": "user", "content": "Hello"}]}'`;
  const hint = html`<p>Requests made through the gateway show up here within seconds. Create a user and an
    API key, then send a first request:</p>
    <pre class="code-block">${example}</pre>`;
  return html`<div class="card"><${EmptyState} title="No traffic in this period" hint=${hint}
    icon=${html`<svg viewBox="0 0 24 24"><path d="M3 12h4l3-8 4 16 3-8h4"/></svg>`}
    action=${html`<a class="btn btn-primary" href="#/users">Create a user and key</a>`} /></div>`;
}

/** @param {{me: any, query: Record<string,string>}} props */
export function DashboardPage({ me, query: q = {} }) {
  const period = periodOf(q.period);
  const { data, error, loading, reload } = useAsync(() => {
    const toMs = Date.now();
    return api('GET', `/stats${query({ from: new Date(toMs - period.days * DAY_MS).toISOString(), to: new Date(toMs).toISOString(), per: period.per })}`);
  }, [period.value]);
  const alerts = useAsync(() => api('GET', '/alerts?limit=10'), [period.value]);
  const reloadAll = () => {
    reload();
    alerts.reload();
  };

  const actions = html`
    <${Field} label="Period" id="dash-period" class="field-inline">
      <select id="dash-period" value=${period.value} onChange=${(e) => setPeriod(e.currentTarget.value)}>
        ${PERIODS.map((p) => html`<option value=${p.value}>${p.label}</option>`)}
      </select>
    <//>
    <button type="button" class="btn" onClick=${reloadAll} disabled=${loading} aria-label="Refresh">
      <svg viewBox="0 0 24 24" aria-hidden="true"><path d="M20 11a8 8 0 1 0-2.3 5.7M20 4v7h-7"/></svg>Refresh
    </button>`;

  let body;
  if (error && !data) body = html`<${ErrorBox} error=${error} onRetry=${reload} />`;
  else if (!data) body = html`<div class="card"><${Spinner} label="Loading statistics…" /></div>`;
  else {
    const s = data;
    const empty = s.totals.requests === 0;
    body = html`<div class=${loading ? 'loading-fade' : ''} style="display:flex;flex-direction:column;gap:16px">
      ${error && html`<${ErrorBox} error=${error} onRetry=${reload} />`}
      <${Stats} s=${s} />
      ${empty
        ? html`<${NoTraffic} />`
        : html`<${Card} title=${html`Requests and cost per ${s.per_hour ? 'hour' : 'day'} <span class="card-sub">${s.time_zone}</span>`} actions=${html`<${ChartLegend} />`}>
            <${UsageChart} points=${s.per_hour ?? s.per_day} unit=${s.per_hour ? 'hour' : 'day'} timeZone=${s.time_zone} />
          <//>
          <div class="grid grid-2"><${TopUsers} rows=${s.top_users} /><${TopModels} rows=${s.top_models} /></div>`}
      ${(!empty || s.budget_alerts.length > 0 || s.unpriced_models.length > 0) &&
      html`<div class="grid grid-2"><${BudgetAlerts} rows=${s.budget_alerts} /><${UnpricedModels} rows=${s.unpriced_models} /></div>`}
      <${RecentAlerts} state=${alerts} />
      <${Providers} providers=${me?.gateway?.providers ?? []} />
    </div>`;
  }

  return html`<div class="page">
    <${PageHeader} title="Dashboard" subtitle=${`Gateway traffic, spend and latency · ${period.label.toLowerCase()}`} actions=${actions} />
    ${body}
  </div>`;
}
