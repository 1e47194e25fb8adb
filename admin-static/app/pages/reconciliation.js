// "Reconciliation": the runs that compared the ledger with the providers' own usage and cost reports
// (GET /admin/api/reconciliation/runs), and one run's rows per day x provider x model with the flag and
// its likely causes (GET .../runs/:id), with a chart of ledger vs provider cost per day. Runs are
// started by `tollgate reconcile` and the daily job; this page only reads.
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { html, PageHeader, Card, Spinner, ErrorBox, EmptyState, Badge, useAsync, formatUsd, formatNumber, formatDateTime } from '../components.js';
import { ReconciliationChart } from './reconciliation-chart.js';

const STATE_TONE = { ok: 'ok', flagged: 'warn', failed: 'err' };

function Runs({ runs, selected, onSelect }) {
  return html`<${Card} title="Runs" flush>
    <div class="table-wrap"><table class="table" data-testid="reconciliation-runs">
      <thead><tr><th>Run</th><th>Started</th><th>Days</th><th>Providers</th><th>By</th><th>State</th><th class="num">Flagged</th><th class="num">Ledger</th><th class="num">Provider</th><th>Alert</th></tr></thead>
      <tbody>${runs.map((r) => html`<tr key=${r.id} aria-selected=${r.id === selected ? 'true' : undefined} onClick=${() => onSelect(r.id)} style="cursor:pointer">
        <td class="mono">#${r.id}</td>
        <td class="nowrap">${formatDateTime(r.started_at)}</td>
        <td class="nowrap">${r.from_day === r.to_day ? r.from_day : `${r.from_day} – ${r.to_day}`}</td>
        <td>${r.providers.join(', ')}</td>
        <td>${r.trigger}</td>
        <td><${Badge} tone=${STATE_TONE[r.state]} title=${r.error ?? undefined}>${r.state}<//></td>
        <td class="num">${r.flagged_rows}</td>
        <td class="num">${formatUsd(r.ledger_cost_usd)}</td>
        <td class="num">${formatUsd(r.report_cost_usd)}</td>
        <td>${r.alert_state ?? html`<span class="muted">—</span>`}</td>
      </tr>`)}</tbody></table></div>
  <//>`;
}

function side(s) {
  if (!s.present) return html`<span class="muted">missing</span>`;
  return html`${formatNumber(s.input_tokens)} in${s.cached_input_tokens ? html` <span class="cell-sub">(${formatNumber(s.cached_input_tokens)} cached)</span>` : ''} / ${formatNumber(s.output_tokens)} out`;
}

function Differences({ run }) {
  return html`<${Card} title=${`Run #${run.id}: ${run.from_day} – ${run.to_day}`} flush>
    ${run.error && html`<p class="muted" style="padding:12px 20px">Error: ${run.error}</p>`}
    <div style="padding:12px 20px"><${ReconciliationChart} differences=${run.differences} /></div>
    ${run.differences.length === 0
      ? html`<p class="muted" style="padding:16px 20px">No usage on either side for these days.</p>`
      : html`<div class="table-wrap"><table class="table" data-testid="reconciliation-differences">
        <thead><tr><th>Day</th><th>Provider</th><th>Model</th><th class="num">Requests (ledger / provider)</th><th>Tokens, ledger</th><th>Tokens, provider</th><th class="num">Cost, ledger</th><th class="num">Cost, provider</th><th>Difference</th></tr></thead>
        <tbody>${run.differences.map((d) => html`<tr key=${`${d.day}/${d.provider}/${d.model}`}>
          <td class="nowrap">${d.day}</td>
          <td>${d.provider}</td>
          <td class="mono nowrap">${d.model || html`<span class="muted">(no model)</span>`}</td>
          <td class="num">${d.ledger.requests} / ${d.report.requests ?? '—'}</td>
          <td>${side(d.ledger)}</td>
          <td>${side(d.report)}</td>
          <td class="num">${formatUsd(d.ledger.cost_usd)}</td>
          <td class="num">${d.report.cost_usd === null ? '—' : formatUsd(d.report.cost_usd)}</td>
          <td style="min-width:320px">${d.flagged
            ? html`<${Badge} tone="warn">flagged<//>${d.causes.map((c) => html`<div key=${c.code} class="cell-sub" data-cause=${c.code}>${c.message}</div>`)}`
            : html`<${Badge} tone="ok">within tolerance<//>`}</td>
        </tr>`)}</tbody></table></div>`}
  <//>`;
}

function RunDetail({ id }) {
  const { data, error, loading, reload } = useAsync(() => api('GET', `/reconciliation/runs/${id}`), [id]);
  if (error) return html`<${ErrorBox} error=${error} onRetry=${reload} />`;
  if (!data || loading) return html`<${Spinner} />`;
  return html`<${Differences} run=${data} />`;
}

export function ReconciliationPage() {
  const { data, error, loading, reload } = useAsync(() => api('GET', '/reconciliation/runs?limit=50'), []);
  const [picked, setPicked] = useState(null);
  const runs = data?.data ?? [];
  const selected = picked ?? runs[0]?.id ?? null;
  const actions = html`<button type="button" class="btn btn-sm" onClick=${reload} disabled=${loading}>Refresh</button>`;
  return html`<div class="page">
    <${PageHeader} title="Reconciliation" subtitle="The ledger compared with the providers' own usage and cost reports, per day, provider and model. Runs come from \`tollgate reconcile\` and the daily job." actions=${actions} />
    ${error && html`<${ErrorBox} error=${error} onRetry=${reload} />`}
    ${!data && loading && html`<${Spinner} />`}
    ${data && runs.length === 0
      ? html`<div class="card"><${EmptyState} title="No reconciliation yet" hint="Store an admin key with \`tollgate credentials set-admin --provider openai --admin-key-stdin\`, then run \`tollgate reconcile\` (the daily job runs on its own)." /></div>`
      : data && html`<${Runs} runs=${runs} selected=${selected} onSelect=${setPicked} />${selected !== null && html`<${RunDetail} id=${selected} />`}`}
  </div>`;
}
