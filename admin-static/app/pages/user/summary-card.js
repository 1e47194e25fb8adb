/**
 * The top card of a user's page: spend against budget for the current period, when it resets,
 * rate limits, status and key activity.
 */
import { html, Card, Badge, SpendBar, formatUsd, formatNumber, formatDateTime, formatDateTimeIn, formatDateIn, formatRelative } from '../../components.js';

const PERIOD_LABEL = { daily: 'Daily', weekly: 'Weekly', monthly: 'Monthly', never: 'Never resets' };

function Stat({ label, children, sub }) {
  return html`<div class="stat">
    <div class="stat-label">${label}</div>
    <div class="stat-value">${children}</div>
    ${sub && html`<div class="stat-sub muted small">${sub}</div>`}
  </div>`;
}

function limitText(n, unit) {
  return n == null ? html`<span class="muted">No limit</span>` : html`${formatNumber(n)} <span class="muted small">${unit}</span>`;
}

/**
 * Props: `user` (AdminUser), `timeZone` (the budget's, from GET /me): periods start at its midnight,
 * so their start and reset are shown in it, named, not in the browser's zone.
 */
export function SummaryCard({ user, timeZone }) {
  const b = user.budget;
  const tracked = b.spent_usd != null;
  return html`<${Card} title="Budget and limits">
    <div class="summary-spend">
      <div class="summary-spend-head">
        <span class="stat-label">Spend this period</span>
        ${b.period_start && html`<span class="muted small">since ${formatDateIn(b.period_start, timeZone)}${timeZone ? ` (${timeZone})` : ''}</span>`}
      </div>
      ${tracked
        ? html`<${SpendBar} spent=${b.spent_usd} limit=${b.limit_usd} />`
        : html`<p class="muted">Spend is not tracked: the budget plugin is not in the manifest.</p>`}
    </div>
    <div class="grid grid-4 summary-grid">
      <${Stat} label="Status">
        ${user.disabled ? html`<${Badge} tone="muted">disabled<//>` : html`<${Badge} tone="ok">active<//>`}
      <//>
      <${Stat} label="Remaining" sub=${b.reserved_usd ? `${formatUsd(b.reserved_usd)} held by requests in flight` : null}>
        ${b.limit_usd == null ? html`<span class="muted">No limit</span>` : formatUsd(b.remaining_usd)}
      <//>
      <${Stat} label="Budget period">${PERIOD_LABEL[user.budget_period] ?? user.budget_period}<//>
      <${Stat} label="Resets at" sub=${b.resets_at ? formatRelativeFuture(b.resets_at) : null}>
        ${b.resets_at
          ? html`<span data-testid="resets-at">${formatDateTimeIn(b.resets_at, timeZone)}${timeZone && html` <span class="stat-zone">(${timeZone})</span>`}</span>`
          : html`<span class="muted">Never</span>`}
      <//>
      <${Stat} label="Requests per minute">${limitText(user.rpm, 'rpm')}<//>
      <${Stat} label="Tokens per minute">${limitText(user.tpm, 'tpm')}<//>
      <${Stat} label="Concurrent requests">${user.max_concurrent == null ? html`<span class="muted">Gateway default</span>` : formatNumber(user.max_concurrent)}<//>
      <${Stat} label="API keys">${formatNumber(user.key_count)}<//>
      <${Stat} label="Last used" sub=${user.last_used_at ? formatDateTime(user.last_used_at) : null}>
        ${user.last_used_at ? formatRelative(user.last_used_at) : html`<span class="muted">Never</span>`}
      <//>
    </div>
  <//>`;
}

/** "in 3 days" / "in 5 h" for a reset time in the future. */
function formatRelativeFuture(iso) {
  const ms = new Date(iso).getTime() - Date.now();
  if (!(ms > 0)) return null;
  const min = Math.round(ms / 60_000);
  if (min < 60) return `in ${min} min`;
  const hours = Math.round(min / 60);
  if (hours < 48) return `in ${hours} h`;
  return `in ${Math.round(hours / 24)} days`;
}
