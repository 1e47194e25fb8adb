// Transient success/failure notices. toast() can be called from anywhere (event handlers,
// after an await); <Toasts/> mounted once by the shell renders them.
import { useEffect, useState } from 'preact/hooks';
import { html } from './html.js';

let items = [];
let seq = 0;
const listeners = new Set();

function emit() {
  for (const fn of listeners) fn(items);
}

/**
 * Shows a notice for ~4 s.
 * @param {string} message
 * @param {'ok'|'warn'|'err'|'info'} [tone]
 */
export function toast(message, tone = 'ok') {
  const id = ++seq;
  items = [...items, { id, message, tone }];
  emit();
  setTimeout(() => dismiss(id), tone === 'err' ? 7000 : 4000);
}

function dismiss(id) {
  items = items.filter((t) => t.id !== id);
  emit();
}

/** Renders the toast stack (bottom right); mount once. */
export function Toasts() {
  const [list, setList] = useState(items);
  useEffect(() => {
    listeners.add(setList);
    return () => listeners.delete(setList);
  }, []);
  return html`<div class="toasts" role="status" aria-live="polite">
    ${list.map(
      (t) => html`<div key=${t.id} class=${`toast toast-${t.tone}`}>
        <span class="toast-dot" aria-hidden="true"></span>
        <span class="toast-msg">${t.message}</span>
        <button type="button" class="toast-close" aria-label="Dismiss" onClick=${() => dismiss(t.id)}>✕</button>
      </div>`,
    )}
  </div>`;
}
