// htm bound to Preact's h: the JSX stand-in every page uses (no build step).
import { h } from 'preact';
import htm from 'htm';

/** Tagged template that builds Preact vnodes: html`<div class="x">${child}</div>`. */
export const html = htm.bind(h);
