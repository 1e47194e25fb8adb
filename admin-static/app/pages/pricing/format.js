/**
 * Per-million-token prices as the pricing page shows them: up to 4 decimals, at least 2
 * (2.5 → "$2.50", 0.075 → "$0.075", 0.0375 → "$0.0375"), and 4 significant digits below a cent
 * (0.00012 → "$0.00012") so small prices never round to zero.
 * @param {number|null|undefined} usdPerMillion
 */
export function formatPerMillion(usdPerMillion) {
  if (usdPerMillion === null || usdPerMillion === undefined || Number.isNaN(usdPerMillion)) return '—';
  const n = Number(usdPerMillion);
  if (n === 0) return '$0.00';
  const text = Math.abs(n) >= 0.01 ? n.toFixed(4) : n.toPrecision(4);
  const [whole, frac = ''] = Number(text).toString().includes('e') ? [text, ''] : text.split('.');
  const trimmed = frac.replace(/0+$/, '').padEnd(2, '0');
  return `$${Number(whole).toLocaleString('en-US')}.${trimmed}`;
}
