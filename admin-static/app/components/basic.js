// Small presentational building blocks shared by every page (class names: ui.md vocabulary).
import { cloneElement } from 'preact';
import { html } from './html.js';
import { formatUsd } from './format.js';

/** Page title row: `title` (h1), optional `subtitle`, `actions` on the right. */
export function PageHeader({ title, subtitle, actions }) {
  return html`<header class="page-header">
    <div class="page-header-text">
      <h1>${title}</h1>
      ${subtitle && html`<p class="page-subtitle">${subtitle}</p>`}
    </div>
    ${actions && html`<div class="page-actions">${actions}</div>`}
  </header>`;
}

/** A white panel with an optional title (h2) and header `actions`. */
export function Card({ title, actions, children, class: extra = '', flush = false }) {
  return html`<section class=${`card ${flush ? 'card-flush ' : ''}${extra}`}>
    ${(title || actions) &&
    html`<div class="card-head">
      ${title && html`<h2 class="card-title">${title}</h2>`}
      ${actions && html`<div class="card-actions">${actions}</div>`}
    </div>`}
    ${children}
  </section>`;
}

/** Loading indicator; `label` is read by screen readers. */
export function Spinner({ label = 'Loading…', inline = false } = {}) {
  return html`<div class=${inline ? 'spinner-wrap spinner-inline' : 'spinner-wrap'} role="status" aria-live="polite">
    <span class="spinner" aria-hidden="true"></span><span class="spinner-label">${label}</span>
  </div>`;
}

/** Shows an ApiError's message (and code), with a Retry button when `onRetry` is given. */
export function ErrorBox({ error, onRetry }) {
  if (!error) return null;
  const message = error.message || String(error);
  return html`<div class="error-box" role="alert">
    <div class="error-box-icon" aria-hidden="true">!</div>
    <div class="error-box-body">
      <strong>${error.status === 0 ? 'Network error' : 'Something went wrong'}</strong>
      <p>${message}${error.code ? html` <span class="mono muted">(${error.code})</span>` : ''}</p>
    </div>
    ${onRetry && html`<button type="button" class="btn btn-sm" onClick=${onRetry}>Retry</button>`}
  </div>`;
}

const INBOX = html`<svg viewBox="0 0 24 24"><path d="M3 13h5l1.5 3h5L16 13h5"/><path d="M5.5 5.5h13L21 13v5a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2v-5z"/></svg>`;

/** Friendly "nothing here yet" block: `title`, a `hint` (string or vnode) and an optional `action`. */
export function EmptyState({ title, hint, action, icon }) {
  return html`<div class="empty">
    <div class="empty-icon" aria-hidden="true">${icon || INBOX}</div>
    <p class="empty-title">${title}</p>
    ${hint && html`<div class="hint empty-hint">${hint}</div>`}
    ${action && html`<div class="empty-action">${action}</div>`}
  </div>`;
}

/**
 * Form field: a <label for=id>, the control (children), a hint and an error. A single child
 * control gets aria-invalid / aria-describedby wired automatically.
 */
export function Field({ label, id, error, hint, children, class: extra = '' }) {
  const described = [error ? `${id}-error` : null, hint ? `${id}-hint` : null].filter(Boolean).join(' ') || undefined;
  const single = children && !Array.isArray(children) && typeof children === 'object' && children.type;
  const control = single
    ? cloneElement(children, { 'aria-invalid': error ? 'true' : undefined, 'aria-describedby': described })
    : children;
  return html`<div class=${`field ${error ? 'has-error ' : ''}${extra}`}>
    <label for=${id}>${label}</label>
    ${control}
    ${hint && !error && html`<div class="hint" id=${`${id}-hint`}>${hint}</div>`}
    ${error && html`<div class="field-error" id=${`${id}-error`} role="alert">${error}</div>`}
  </div>`;
}

/** Small status pill. tone: 'ok' | 'warn' | 'err' | 'muted' | 'info'. */
export function Badge({ tone = 'muted', children, title }) {
  return html`<span class=${`badge badge-${tone}`} title=${title}>${children}</span>`;
}

/**
 * Spend against budget: "$1.20 of $5.00" over a bar that turns amber at 80 % and red at 100 %.
 * `limit` null/undefined → "no limit".
 */
export function SpendBar({ spent, limit, compact = false }) {
  const spentUsd = spent ?? 0;
  if (limit === null || limit === undefined) {
    return html`<div class=${`spend ${compact ? 'spend-compact' : ''}`}>
      <div class="spend-text"><span>${formatUsd(spentUsd)}</span> <span class="muted">· no limit</span></div>
      <div class="bar bar-none" aria-hidden="true"><div class="bar-fill" style="width:0"></div></div>
    </div>`;
  }
  const ratio = limit > 0 ? spentUsd / limit : spentUsd > 0 ? 1 : 0;
  const tone = ratio >= 1 ? 'err' : ratio >= 0.8 ? 'warn' : 'ok';
  const pct = Math.round(Math.min(1, ratio) * 100);
  const text = `${formatUsd(spentUsd)} of ${formatUsd(limit)}`;
  return html`<div class=${`spend ${compact ? 'spend-compact' : ''}`}>
    <div class="spend-text">
      <span>${text}</span>
      <span class=${`spend-pct tone-${tone}`}>${ratio > 0 && ratio < 0.01 ? '<1' : Math.round(ratio * 100)}%</span>
    </div>
    <div class=${`bar bar-${tone}`} role="progressbar" aria-label=${`Spent ${text}`}
      aria-valuemin="0" aria-valuemax="100" aria-valuenow=${pct}>
      <div class="bar-fill" style=${`width:${pct}%`}></div>
    </div>
  </div>`;
}

/** Previous/next paging row; `label` describes the current page ("1–50 of 230"). */
export function Pager({ hasPrev, hasNext, onPrev, onNext, label, prevLabel = 'Previous', nextLabel = 'Next' }) {
  return html`<nav class="pager" aria-label="Pagination">
    <span class="pager-label muted">${label}</span>
    <div class="pager-buttons">
      <button type="button" class="btn btn-sm" disabled=${!hasPrev} onClick=${onPrev}>
        <span aria-hidden="true">‹ </span>${prevLabel}
      </button>
      <button type="button" class="btn btn-sm" disabled=${!hasNext} onClick=${onNext}>
        ${nextLabel}<span aria-hidden="true"> ›</span>
      </button>
    </div>
  </nav>`;
}
