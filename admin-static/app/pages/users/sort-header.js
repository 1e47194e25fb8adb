/**
 * A sortable column header: a button inside the <th> (so it is reachable by keyboard) and
 * `aria-sort` on the <th> itself, which is where assistive technology looks for it.
 */
import { html } from '../../components.js';

/**
 * Props: `label`, `field` (the API's sort name), `sort` {field, order}, `onSort(field)`,
 * `numeric` (right-aligned column).
 */
export function SortHeader({ label, field, sort, onSort, numeric }) {
  const active = sort.field === field;
  const ariaSort = active ? (sort.order === 'asc' ? 'ascending' : 'descending') : 'none';
  const arrow = active ? (sort.order === 'asc' ? '↑' : '↓') : '↕';
  return html`<th scope="col" aria-sort=${ariaSort} class=${numeric ? 'num' : undefined}>
    <button type="button" class=${`th-sort${active ? ' is-active' : ''}`} onClick=${() => onSort(field)}>
      ${label}<span class="th-sort-arrow" aria-hidden="true">${arrow}</span>
    </button>
  </th>`;
}
