/**
 * The "Unpriced models" notice: models that served traffic without a price (so those requests
 * cost $0 in the ledger), each with "Set price" prefilled with its model and provider.
 */
import { html, formatNumber, formatRelative } from '../../components.js';

/** Props: `unpriced` ([{provider, model, requests, last_seen}]), `onSetPrice({model, provider})`. */
export function UnpricedNotice({ unpriced, onSetPrice }) {
  if (!unpriced || unpriced.length === 0) return null;
  return html`<section class="notice" aria-labelledby="unpriced-title">
    <span class="notice-icon" aria-hidden="true">⚠</span>
    <div class="notice-body">
      <h2 id="unpriced-title" class="notice-title card-title">Unpriced models</h2>
      <p class="small">
        ${unpriced.length === 1 ? 'This model has' : `These ${unpriced.length} models have`} served requests without a price, so
        ${unpriced.length === 1 ? ' its' : ' their'} requests count as $0 against budgets. Set a price to bill the next ones.
      </p>
      <ul class="notice-list">
        ${unpriced.map(
          (u) => html`<li key=${`${u.provider}/${u.model}`}>
            <button type="button" class="btn btn-sm" onClick=${() => onSetPrice({ model: u.model, provider: u.provider })}>Set price</button>
            <span class="mono">${u.model}</span>
            <span class="muted small">${u.provider} · ${formatNumber(u.requests)} ${u.requests === 1 ? 'request' : 'requests'} · last ${formatRelative(u.last_seen)}</span>
          </li>`,
        )}
      </ul>
    </div>
  </section>`;
}
