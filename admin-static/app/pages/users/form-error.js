/**
 * A form-level error (one that names no field): the API's message in a role="alert" box, so a
 * screen reader announces it when a save fails.
 */
import { html } from '../../components.js';

/** Props: `error` (Error or null). Renders nothing without an error. */
export function FormError({ error }) {
  if (!error) return null;
  return html`<div class="error-box" role="alert">${error.message || String(error)}</div>`;
}
