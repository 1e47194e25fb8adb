// Per-day or per-hour chart for the dashboard: requests as bars (errors in red at their base) on the
// left axis, cost as a line on the right axis. Plain SVG sized to its container; every day or hour has
// a hover band whose <title> is the tooltip, and the whole chart has a <title>/<desc> for screen readers.
import { useEffect, useRef, useState } from 'preact/hooks';
import { html, formatNumber, formatUsd, formatCompact } from './components.js';

const HEIGHT = 240;
const PAD = { top: 14, right: 80, bottom: 28, left: 46 };

/** Rounds `max` up to a 1/2/5×10^k step so the axis reads well; returns {top, step}. */
export function niceScale(max, ticks = 4, integer = false) {
  if (!(max > 0)) return integer ? { top: ticks, step: 1 } : { top: ticks * 0.01, step: 0.01 };
  const raw = max / ticks;
  const pow = 10 ** Math.floor(Math.log10(raw));
  let step = [1, 2, 2.5, 3, 4, 5, 6, 8, 10].map((m) => m * pow).find((s) => s >= raw);
  if (integer) step = Math.max(1, Math.ceil(step));
  return { top: step * ticks, step };
}

function dayLabel(date, long = false) {
  const d = new Date(`${date}T00:00:00Z`);
  return d.toLocaleDateString(undefined, long
    ? { weekday: 'short', month: 'short', day: 'numeric', year: 'numeric', timeZone: 'UTC' }
    : { month: 'short', day: 'numeric', timeZone: 'UTC' });
}

/** An hour (`start`, ISO) on the clock of `timeZone`: "14:00", or with its date when `long`. */
function hourLabel(start, timeZone, long = false) {
  const d = new Date(start);
  return d.toLocaleString(undefined, long
    ? { weekday: 'short', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZone }
    : { hour: '2-digit', minute: '2-digit', timeZone });
}

/** How the chart names its points: per day (`date`) or per hour (`start`). */
const UNITS = {
  day: { key: (p) => p.date, label: (p) => dayLabel(p.date), long: (p) => dayLabel(p.date, true), plural: 'days', busiest: 'day' },
  hour: {
    key: (p) => p.start, label: (p, tz) => hourLabel(p.start, tz), long: (p, tz) => hourLabel(p.start, tz, true), plural: 'hours', busiest: 'hour',
  },
};

function usdTick(v) {
  if (v === 0) return '$0';
  return v >= 1 ? `$${formatCompact(v)}` : formatUsd(v);
}

function useWidth(ref, fallback = 800) {
  const [width, setWidth] = useState(fallback);
  useEffect(() => {
    const el = ref.current;
    if (!el) return undefined;
    const measure = () => setWidth(Math.max(320, Math.floor(el.clientWidth)));
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return width;
}

/**
 * `points` are the stats' `per_day` (`unit` "day", each with its `date`) or `per_hour` (`unit` "hour",
 * each with its `start`), labelled in `timeZone`.
 * @param {{points: {requests: number, errors: number, total_tokens: number, cost_usd: number, date?: string, start?: string}[], unit?: 'day'|'hour', timeZone?: string}} props
 */
export function UsageChart({ points: days, unit = 'day', timeZone = 'UTC' }) {
  const names = UNITS[unit];
  const wrap = useRef(null);
  const width = useWidth(wrap);
  const innerW = width - PAD.left - PAD.right;
  const innerH = HEIGHT - PAD.top - PAD.bottom;
  const req = niceScale(Math.max(0, ...days.map((d) => d.requests)), 4, true);
  const cost = niceScale(Math.max(0, ...days.map((d) => d.cost_usd)));
  const slot = innerW / Math.max(1, days.length);
  const barW = Math.max(2, Math.min(36, slot * 0.62));
  const yReq = (v) => PAD.top + innerH - (v / req.top) * innerH;
  const yCost = (v) => PAD.top + innerH - (v / cost.top) * innerH;
  const xMid = (i) => PAD.left + slot * i + slot / 2;
  const labelEvery = Math.max(1, Math.ceil(days.length / Math.max(1, Math.floor(innerW / 64))));
  const ticks = Array.from({ length: 5 }, (_, i) => i);

  const totalReq = days.reduce((s, d) => s + d.requests, 0);
  const totalCost = days.reduce((s, d) => s + d.cost_usd, 0);
  const peak = days.reduce((best, d) => (d.requests > (best?.requests ?? -1) ? d : best), null);
  const desc = days.length === 0
    ? `No ${names.plural} in this period.`
    : `${days.length} ${names.plural} from ${names.long(days[0], timeZone)} to ${names.long(days[days.length - 1], timeZone)} (${timeZone}). ` +
      `${formatNumber(totalReq)} requests costing ${formatUsd(totalCost)} in total` +
      (peak && peak.requests > 0 ? `; busiest ${names.busiest} ${names.long(peak, timeZone)} with ${formatNumber(peak.requests)} requests.` : '.');
  const linePoints = days.map((d, i) => `${xMid(i).toFixed(1)},${yCost(d.cost_usd).toFixed(1)}`).join(' ');
  const areaPoints = days.length
    ? `${xMid(0).toFixed(1)},${yCost(0)} ${linePoints} ${xMid(days.length - 1).toFixed(1)},${yCost(0)}`
    : '';

  return html`<div ref=${wrap} class="chart-wrap">
    <svg class="chart" width=${width} height=${HEIGHT} viewBox=${`0 0 ${width} ${HEIGHT}`} role="img"
      aria-labelledby="daily-chart-title daily-chart-desc" data-testid="usage-chart" data-unit=${unit}>
      <title id="daily-chart-title">Requests and cost per ${unit}</title>
      <desc id="daily-chart-desc">${desc}</desc>
      <defs>
        <linearGradient id="cost-fill" x1="0" y1="0" x2="0" y2="1">
          <stop offset="0%" stop-color="#f59e0b" stop-opacity="0.18" />
          <stop offset="100%" stop-color="#f59e0b" stop-opacity="0" />
        </linearGradient>
      </defs>
      ${ticks.map((i) => {
        const y = PAD.top + innerH - (i / 4) * innerH;
        return html`<g key=${`t${i}`}>
          <line class=${i === 0 ? 'axis-line' : 'grid-line'} x1=${PAD.left} x2=${width - PAD.right} y1=${y} y2=${y} />
          <text x=${PAD.left - 8} y=${y + 4} text-anchor="end">${formatCompact(req.step * i)}</text>
          <text x=${width - PAD.right + 8} y=${y + 4} text-anchor="start">${usdTick(cost.step * i)}</text>
        </g>`;
      })}
      ${days.map((d, i) => {
        const x = xMid(i) - barW / 2;
        const yTop = yReq(d.requests);
        const yErr = yReq(Math.min(d.errors, d.requests));
        const base = PAD.top + innerH;
        const tip = `${names.long(d, timeZone)}\n${formatNumber(d.requests)} requests` +
          (d.errors ? ` (${formatNumber(d.errors)} errors)` : '') +
          `\n${formatNumber(d.total_tokens)} tokens\n${formatUsd(d.cost_usd)} cost`;
        return html`<g class="point" key=${names.key(d)}>
          <title>${tip}</title>
          <rect class="hover-band" x=${PAD.left + slot * i} y=${PAD.top} width=${slot} height=${innerH} />
          ${d.requests > 0 && html`<rect class="bar-req" x=${x} y=${yTop} width=${barW} height=${Math.max(1, base - yTop)} rx="2" />`}
          ${d.errors > 0 && html`<rect class="bar-err" x=${x} y=${yErr} width=${barW} height=${Math.max(1, base - yErr)} rx="2" />`}
          ${i % labelEvery === 0 && html`<text x=${xMid(i)} y=${HEIGHT - 8} text-anchor="middle">${names.label(d, timeZone)}</text>`}
        </g>`;
      })}
      ${days.length > 1 && html`<polygon class="cost-area" points=${areaPoints} pointer-events="none" />`}
      ${days.length > 0 && html`<polyline class="cost-line" points=${linePoints} pointer-events="none" />`}
      ${days.length <= 31 && days.map((d, i) => html`<circle key=${`c${names.key(d)}`} class="cost-dot" cx=${xMid(i)} cy=${yCost(d.cost_usd)} r="2.6" pointer-events="none" />`)}
    </svg>
  </div>`;
}

/** Legend matching UsageChart's colours. */
export function ChartLegend() {
  return html`<div class="legend" aria-hidden="true">
    <span class="legend-item"><span class="legend-swatch" style="background:#c7d2fe"></span>Requests</span>
    <span class="legend-item"><span class="legend-swatch" style="background:#fca5a5"></span>Errors</span>
    <span class="legend-item"><span class="legend-line"></span>Cost (USD)</span>
  </div>`;
}
