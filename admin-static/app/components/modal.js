// Accessible dialogs: role="dialog" aria-modal, labelled by the title, Escape closes,
// Tab stays inside, focus returns to the opener when closed.
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from './html.js';

let nextId = 0;
const FOCUSABLE =
  'a[href], button:not([disabled]), input:not([disabled]):not([type="hidden"]), select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

function focusables(root) {
  return Array.from(root.querySelectorAll(FOCUSABLE)).filter((el) => el.offsetParent !== null || el === document.activeElement);
}

/** Keeps focus inside `ref` while mounted, closes on Escape, restores focus on unmount. */
function useDialogFocus(ref, onClose) {
  const closeRef = useRef(onClose);
  closeRef.current = onClose;
  useEffect(() => {
    const opener = document.activeElement;
    const root = ref.current;
    // Prefer the first form control (what the user came to fill in); a read-only dialog focuses
    // itself so no button is pressed by a stray Enter and no focus ring flashes on "Close".
    const first = root.querySelector('[autofocus]') || root.querySelector('.modal-body input, .modal-body select, .modal-body textarea') || root;
    first.focus();
    function onKey(e) {
      if (e.key === 'Escape') {
        e.stopPropagation();
        closeRef.current && closeRef.current();
        return;
      }
      if (e.key !== 'Tab') return;
      const items = focusables(root);
      if (items.length === 0) { e.preventDefault(); return; }
      const firstEl = items[0];
      const lastEl = items[items.length - 1];
      const at = document.activeElement;
      if (e.shiftKey && (at === firstEl || at === root || !root.contains(at))) {
        e.preventDefault(); lastEl.focus();
      } else if (!e.shiftKey && (at === lastEl || !root.contains(at))) {
        e.preventDefault(); firstEl.focus();
      }
    }
    root.addEventListener('keydown', onKey);
    document.body.classList.add('modal-open');
    return () => {
      root.removeEventListener('keydown', onKey);
      document.body.classList.remove('modal-open');
      if (opener && typeof opener.focus === 'function' && document.contains(opener)) opener.focus();
    };
  }, []);
}

/**
 * Modal dialog. `footer` renders in the bottom bar (usually Cancel + primary button).
 * Clicking the backdrop closes it like Escape. `size`: 'sm' | 'md' | 'lg'.
 */
export function Modal({ title, onClose, children, footer, size = 'md', describedBy }) {
  const ref = useRef(null);
  const [titleId] = useState(() => `modal-title-${++nextId}`);
  useDialogFocus(ref, onClose);
  function onBackdrop(e) {
    if (e.target === e.currentTarget && onClose) onClose();
  }
  return html`<div class="modal-backdrop" onMouseDown=${onBackdrop}>
    <div class=${`modal modal-${size}`} role="dialog" aria-modal="true" aria-labelledby=${titleId}
      aria-describedby=${describedBy} ref=${ref} tabindex="-1">
      <div class="modal-head">
        <h2 id=${titleId} class="modal-title">${title}</h2>
        ${onClose && html`<button type="button" class="btn btn-ghost btn-icon" aria-label="Close" onClick=${onClose}>✕</button>`}
      </div>
      <div class="modal-body">${children}</div>
      ${footer && html`<div class="modal-foot">${footer}</div>`}
    </div>
  </div>`;
}

/**
 * Yes/no question. `onConfirm` may return a promise: the button shows progress and the
 * dialog stays open (showing the error) if it rejects.
 */
export function ConfirmDialog({ title, message, confirmLabel = 'Confirm', danger = false, onConfirm, onCancel }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(null);
  const [msgId] = useState(() => `confirm-msg-${++nextId}`);
  async function confirm() {
    setBusy(true);
    setError(null);
    try {
      await onConfirm();
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  }
  const footer = html`
    <button type="button" class="btn" onClick=${onCancel} disabled=${busy}>Cancel</button>
    <button type="button" class=${danger ? 'btn btn-danger' : 'btn btn-primary'} onClick=${confirm} disabled=${busy}>
      ${busy ? 'Working…' : confirmLabel}
    </button>`;
  return html`<${Modal} title=${title} onClose=${busy ? undefined : onCancel} footer=${footer} size="sm" describedBy=${msgId}>
    <div id=${msgId} class="confirm-message">${message}</div>
    ${error && html`<p class="field-error" role="alert">${error.message || String(error)}</p>`}
  <//>`;
}
