// Ledger vs provider cost per day for the reconciliation page: two lines (the ledger's cost and the
// provider's billed cost), plain SVG with a fixed view box that scales to its container; each day has a
// hover band whose <title> is the tooltip, and the chart has a <title>/<desc> for screen readers.
import { html, formatUsd } from '../components.js';
import { niceScale } from '../chart.js';

const WIDTH = 720;
const HEIGHT = 220;
const PAD = { top: 14, right: 16, bottom: 28, left: 64 };

/** The run's rows summed per day: [{day, ledger, provider}] in USD, oldest first. */
export function costPerDay(differences) {
  const days = new Map();
  for (const d of differences) {
    const day = days.get(d.day) ?? { day: d.day, ledger: 0, provider: 0 };
    day.ledger += d.ledger.cost_usd;
    day.provider += d.report.cost_usd ?? 0;
    days.set(d.day, day);
  }
  return [...days.values()].sort((a, b) => (a.day < b.day ? -1 : 1));
}

export function ReconciliationChart({ differences }) {
  const days = costPerDay(differences);
  if (days.length === 0) return null;
  const { top, step } = niceScale(Math.max(...days.map((d) => Math.max(d.ledger, d.provider))));
  const innerW = WIDTH - PAD.left - PAD.right;
  const innerH = HEIGHT - PAD.top - PAD.bottom;
  const band = innerW / days.length;
  const x = (i) => PAD.left + band * (i + 0.5);
  const y = (usd) => PAD.top + innerH - (usd / top) * innerH;
  const line = (key) => days.map((d, i) => `${i === 0 ? 'M' : 'L'}${x(i).toFixed(1)},${y(d[key]).toFixed(1)}`).join(' ');
  const ticks = [];
  for (let v = 0; v <= top + step / 2; v += step) ticks.push(v);
  return html`<figure class="recon-chart">
    <svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="recon-chart-title recon-chart-desc" data-testid="reconciliation-chart">
      <title id="recon-chart-title">Ledger and provider cost per day</title>
      <desc id="recon-chart-desc">${days.map((d) => `${d.day}: ledger ${formatUsd(d.ledger)}, provider ${formatUsd(d.provider)}`).join('; ')}</desc>
      ${ticks.map((v) => html`<g key=${v}>
        <line x1=${PAD.left} x2=${WIDTH - PAD.right} y1=${y(v)} y2=${y(v)} stroke="currentColor" stroke-opacity="0.12" />
        <text x=${PAD.left - 6} y=${y(v) + 4} text-anchor="end" font-size="11" fill="currentColor" fill-opacity="0.7">${formatUsd(v)}</text>
      </g>`)}
      ${days.map((d, i) => html`<g key=${d.day}>
        <rect x=${PAD.left + band * i} y=${PAD.top} width=${band} height=${innerH} fill="transparent"><title>${d.day}: ledger ${formatUsd(d.ledger)}, provider ${formatUsd(d.provider)}</title></rect>
        <text x=${x(i)} y=${HEIGHT - 8} text-anchor="middle" font-size="11" fill="currentColor" fill-opacity="0.7">${d.day.slice(5)}</text>
      </g>`)}
      <path d=${line('ledger')} fill="none" stroke="var(--accent, #2563eb)" stroke-width="2" />
      <path d=${line('provider')} fill="none" stroke="var(--err, #dc2626)" stroke-width="2" stroke-dasharray="5 3" />
      ${days.map((d, i) => html`<circle key=${`l${d.day}`} cx=${x(i)} cy=${y(d.ledger)} r="3" fill="var(--accent, #2563eb)" />`)}
      ${days.map((d, i) => html`<circle key=${`p${d.day}`} cx=${x(i)} cy=${y(d.provider)} r="3" fill="var(--err, #dc2626)" />`)}
    </svg>
    <figcaption class="muted"><span style="color:var(--accent, #2563eb)">━</span> ledger (Tollgate) <span style="color:var(--err, #dc2626)">┅</span> provider's cost report</figcaption>
  </figure>`;
}
