// Number, money and time formatters. Everything renders in the browser's locale and time
// zone; the API speaks UTC ISO strings and USD numbers.

const EMPTY = '—';

/**
 * USD with adaptive decimals so tiny per-request costs stay visible:
 * 1234.5 → "$1,234.50", 0.25 → "$0.25", 0.0123 → "$0.0123", 0.000017025 → "$0.000017".
 * @param {number|null|undefined} n USD
 */
export function formatUsd(n) {
  if (n === null || n === undefined || Number.isNaN(n)) return EMPTY;
  const abs = Math.abs(n);
  const sign = n < 0 ? '-' : '';
  if (abs === 0) return '$0.00';
  if (abs >= 1) {
    return sign + '$' + abs.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  }
  if (abs >= 0.01) {
    return sign + '$' + abs.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 4 });
  }
  // Two significant digits after the leading zeros; 9 decimals is one nano-USD, the ledger's unit.
  const decimals = Math.min(9, Math.ceil(-Math.log10(abs)) + 2);
  const fixed = abs.toFixed(decimals).replace(/0+$/, '');
  return sign + '$' + (fixed.endsWith('.') ? fixed + '00' : fixed);
}

/** 1234567 → "1,234,567"; null → "—". */
export function formatNumber(n) {
  if (n === null || n === undefined || Number.isNaN(n)) return EMPTY;
  return Number(n).toLocaleString('en-US', { maximumFractionDigits: 2 });
}

/** Large counts shortened to three significant digits: 835924 → "836K", 1234567 → "1.23M", 43 → "43". */
export function formatCompact(n) {
  if (n === null || n === undefined || Number.isNaN(n)) return EMPTY;
  if (Math.abs(n) < 1000) return formatNumber(n);
  return Number(n).toLocaleString('en-US', { notation: 'compact', maximumSignificantDigits: 3 });
}

/** 0.0345 → "3.45%". */
export function formatPercent(ratio) {
  if (ratio === null || ratio === undefined || Number.isNaN(ratio)) return EMPTY;
  const pct = ratio * 100;
  return (pct === 0 || pct >= 10 ? pct.toFixed(1) : pct.toFixed(2)).replace(/\.0+$/, '') + '%';
}

function toDate(iso) {
  if (!iso) return null;
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** ISO string → local date, e.g. "Nov 21, 2026". */
export function formatDate(iso) {
  const d = toDate(iso);
  return d ? d.toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric' }) : EMPTY;
}

/** ISO string → local date and time with seconds, e.g. "Nov 21, 2026, 14:03:07". */
export function formatDateTime(iso) {
  const d = toDate(iso);
  return d
    ? d.toLocaleString(undefined, {
        year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit',
      })
    : EMPTY;
}

/**
 * ISO string → date and time in `timeZone` (IANA), e.g. "Dec 1, 2026, 12:00 AM" for Europe/Paris's
 * midnight. For times the gateway computes in its own zone (budget periods), which need not be the
 * browser's; show the zone's name beside it. Without `timeZone`, the browser's.
 */
export function formatDateTimeIn(iso, timeZone) {
  const d = toDate(iso);
  if (!d) return EMPTY;
  return d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZone: timeZone || undefined });
}

/** ISO string → date in `timeZone` (IANA), e.g. "Nov 1, 2026"; without `timeZone`, the browser's. */
export function formatDateIn(iso, timeZone) {
  const d = toDate(iso);
  return d ? d.toLocaleDateString(undefined, { year: 'numeric', month: 'short', day: 'numeric', timeZone: timeZone || undefined }) : EMPTY;
}

/** ISO string → "3 min ago" style relative time (past only; future falls back to the date). */
export function formatRelative(iso, nowMs = Date.now()) {
  const d = toDate(iso);
  if (!d) return EMPTY;
  const sec = Math.round((nowMs - d.getTime()) / 1000);
  if (sec < 0) return formatDateTime(iso);
  if (sec < 45) return 'just now';
  const min = Math.round(sec / 60);
  if (min < 60) return `${min} min ago`;
  const hours = Math.round(min / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.round(hours / 24);
  if (days < 30) return `${days} d ago`;
  return formatDate(iso);
}

/** Milliseconds: 95 → "95 ms", 1520 → "1.52 s", 125000 → "2m 5s"; null → "—". */
export function formatMs(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return EMPTY;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const m = Math.floor(ms / 60_000);
  return `${m}m ${Math.round((ms % 60_000) / 1000)}s`;
}
