/**
 * Parsing and error mapping shared by the admin forms (users, keys, credentials, prices).
 * Inputs arrive as strings; each parser returns `{ value }` or `{ error }` so a form can
 * collect every problem at once and show it next to its field.
 */
import { ApiError } from '../../api.js';

/** Optional amount ≥ 0 (USD, or USD per million tokens): '' → null. */
export function parseAmount(text, { required = false } = {}) {
  const t = String(text ?? '').trim();
  if (t === '') return required ? { error: 'Required.' } : { value: null };
  const n = Number(t);
  if (!Number.isFinite(n)) return { error: 'Enter a number, like 5 or 0.25.' };
  if (n < 0) return { error: 'Must be 0 or more.' };
  return { value: n };
}

/** Optional positive whole number (rpm, tpm, token counts): '' → null. */
export function parseWholeNumber(text, { required = false, allowZero = false } = {}) {
  const t = String(text ?? '').trim().replace(/[_,\s]/g, '');
  if (t === '') return required ? { error: 'Required.' } : { value: null };
  if (!/^\d+$/.test(t)) return { error: allowZero ? 'Enter a whole number (0 or more).' : 'Enter a positive whole number.' };
  const n = Number(t);
  if (!Number.isSafeInteger(n)) return { error: 'That number is too large.' };
  if (n === 0 && !allowZero) return { error: 'Must be at least 1 (leave empty for no limit).' };
  return { value: n };
}

/**
 * Turns a failed save into field errors: a 400 whose `param` names a known field (or a 409
 * conflict, which lands on `conflictField`) goes next to that field; anything else is a
 * form-level error. `paramToField` maps API param names to form field keys.
 */
export function apiErrorToFields(err, paramToField, conflictField) {
  if (err instanceof ApiError) {
    if (err.status === 409 && conflictField) return { fields: { [conflictField]: err.message }, form: null };
    const key = err.param != null ? paramToField[err.param] : undefined;
    if (err.status === 400 && key) return { fields: { [key]: err.message }, form: null };
  }
  return { fields: {}, form: err };
}

/** Focuses the first input of a form whose id is in `ids`, in the order given. */
export function focusFirstInvalid(ids, errors) {
  const first = ids.find((id) => errors[id]);
  if (!first) return;
  const el = document.getElementById(fieldDomId(first));
  if (el) el.focus();
}

/** The DOM id of a form field; prefixed so two open forms never share ids. */
export function fieldDomId(key) {
  return `f-${key.replace(/_/g, '-')}`;
}
