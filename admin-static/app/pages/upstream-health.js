// "Upstream health": the router's circuit breakers (one per deployment, provider/model) and the
// keys of the providers' pools, from GET /admin/api/upstream-health; a disabled or cooling key can
// be put back into use (POST .../keys/:provider/:key/enable). Keys show as fingerprints only.
import { api } from '../api.js';
import { html, PageHeader, Card, Spinner, ErrorBox, EmptyState, Badge, useAsync, toast, formatMs, formatPercent, formatDateTime, formatRelative } from '../components.js';

const BREAKER_TONE = { closed: 'ok', 'half-open': 'warn', open: 'err' };
const KEY_TONE = { ok: 'ok', cooling: 'warn', disabled: 'err' };

/** The last error ever seen, with when: it may be older than the 5 minutes the error rate covers. */
function LastError({ error }) {
  if (!error) return html`<span class="muted">—</span>`;
  return html`<span title=${formatDateTime(error.at)}><span class="mono">${error.code}</span>${error.status === null ? '' : ` (${error.status})`}
    <span class="cell-sub">${formatRelative(error.at)}</span></span>`;
}

/** Errors of the last 5 minutes: a rate of attempts, never "0 %" for none (that read as a contradiction of a last error). */
function Recent({ recent }) {
  const none = html`<span class="muted">—</span>`;
  return html`
    <td class="num">${recent.attempts}</td>
    <td class="num">${recent.attempts && recent.error_rate > 0 ? formatPercent(recent.error_rate) : recent.attempts ? html`<span class="muted">none</span>` : none}</td>
    <td class="num">${formatMs(recent.p50_latency_ms)}</td>`;
}

function Deployments({ rows }) {
  return html`<${Card} title="Deployments" flush>
    ${rows.length === 0
      ? html`<p class="muted" style="padding:16px 20px">No deployment has been used yet, and the manifest names no model group.</p>`
      : html`<div class="table-wrap"><table class="table" data-testid="deployments">
        <thead><tr><th>Deployment</th><th>Breaker</th><th>Open until</th><th class="num">Attempts (5 min)</th><th class="num">Errors (5 min)</th><th class="num">p50 latency</th><th>Last error (any time)</th></tr></thead>
        <tbody>${rows.map((d) => html`<tr key=${d.deployment} data-deployment=${d.deployment}>
          <td class="mono nowrap">${d.deployment}</td>
          <td><${Badge} tone=${BREAKER_TONE[d.state]}>${d.state}<//></td>
          <td>${d.open_until ? formatDateTime(d.open_until) : html`<span class="muted">—</span>`}</td>
          <${Recent} recent=${d.recent} />
          <td><${LastError} error=${d.last_error} /></td>
        </tr>`)}</tbody></table></div>`}
  <//>`;
}

function Keys({ rows, onEnable }) {
  if (rows.length === 0) return null;
  return html`<${Card} title="Key pools" flush>
    <div class="table-wrap"><table class="table" data-testid="pool-keys">
      <thead><tr><th>Provider</th><th>Key</th><th>State</th><th class="num">Last minute</th><th class="num">Attempts (5 min)</th><th class="num">Errors (5 min)</th><th class="num">p50 latency</th><th>Last error (any time)</th><th></th></tr></thead>
      <tbody>${rows.map((k) => html`<tr key=${`${k.provider}/${k.key}`}>
        <td>${k.provider}</td>
        <td class="mono nowrap">${k.key}</td>
        <td><${Badge} tone=${KEY_TONE[k.state]} title=${k.cooling_until ? `until ${formatDateTime(k.cooling_until)}` : undefined}>${k.state}<//></td>
        <td class="num">${k.last_minute.requests} req${k.rpm ? ` / ${k.rpm}` : ''}</td>
        <${Recent} recent=${k.recent} />
        <td><${LastError} error=${k.last_error} /></td>
        <td class="actions">${k.state !== 'ok' && html`<button type="button" class="btn btn-sm" onClick=${() => onEnable(k)}>Enable</button>`}</td>
      </tr>`)}</tbody></table></div>
  <//>`;
}

export function UpstreamHealthPage() {
  const { data, error, loading, reload } = useAsync(() => api('GET', '/upstream-health'), []);

  async function enable(key) {
    try {
      await api('POST', `/upstream-health/keys/${encodeURIComponent(key.provider)}/${encodeURIComponent(key.key)}/enable`);
      toast(`Key ${key.key} of ${key.provider} is in use again.`, 'ok');
      reload();
    } catch (err) {
      toast(err.message, 'err');
    }
  }

  const actions = html`<button type="button" class="btn btn-sm" onClick=${reload} disabled=${loading}>Refresh</button>`;
  return html`<div class="page">
    <${PageHeader} title="Upstream health" subtitle="Circuit breakers per deployment and the providers' key pools, as this gateway process sees them (in memory: a restart resets them)." actions=${actions} />
    ${error && html`<${ErrorBox} error=${error} onRetry=${reload} />`}
    ${!data && loading && html`<${Spinner} />`}
    ${data && data.deployments.length === 0 && data.keys.length === 0
      ? html`<div class="card"><${EmptyState} title="Nothing to show yet" hint="Deployments appear once a model group names them or a request uses them; keys when a provider has apiKeys." /></div>`
      : data && html`<${Deployments} rows=${data.deployments} /><${Keys} rows=${data.keys} onEnable=${enable} />`}
  </div>`;
}
