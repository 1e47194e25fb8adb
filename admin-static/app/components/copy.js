// Copy-to-clipboard button. navigator.clipboard needs a secure context (HTTPS or localhost);
// elsewhere we fall back to a hidden textarea + execCommand, and if even that fails we select
// the text so the admin can press Ctrl+C.
import { useEffect, useRef, useState } from 'preact/hooks';
import { html } from './html.js';

function fallbackCopy(text) {
  const ta = document.createElement('textarea');
  ta.value = text;
  ta.setAttribute('readonly', '');
  ta.style.position = 'fixed';
  ta.style.opacity = '0';
  document.body.appendChild(ta);
  ta.select();
  let ok = false;
  try { ok = document.execCommand('copy'); } catch { ok = false; }
  ta.remove();
  return ok;
}

/** Button that copies `text`; its label turns into "Copied" for two seconds. */
export function CopyButton({ text, label = 'Copy', class: extra = 'btn btn-sm' }) {
  const [state, setState] = useState('idle');
  const timer = useRef(0);
  useEffect(() => () => clearTimeout(timer.current), []);
  async function copy() {
    let ok = false;
    try {
      if (navigator.clipboard && window.isSecureContext) {
        await navigator.clipboard.writeText(text);
        ok = true;
      }
    } catch { ok = false; }
    if (!ok) ok = fallbackCopy(text);
    setState(ok ? 'copied' : 'failed');
    clearTimeout(timer.current);
    timer.current = setTimeout(() => setState('idle'), 2000);
  }
  const shown = state === 'copied' ? 'Copied' : state === 'failed' ? 'Press Ctrl+C' : label;
  return html`<button type="button" class=${extra} onClick=${copy} aria-live="polite">${shown}</button>`;
}
