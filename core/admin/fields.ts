/**
 * Reading admin request bodies and query strings field by field, with the contract's 400
 * (`invalid_request`, `param` naming the field) for anything of the wrong type or range. A field
 * absent from a body is `undefined` (PATCH leaves it alone); `null` is kept where the field allows it.
 */
import { invalidRequest } from '../errors.ts';

export type Body = Readonly<Record<string, unknown>>;

/** The body as an object; 400 for an array, a string, a number. */
export function objectBody(body: unknown): Body {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw invalidRequest('The request body must be a JSON object.');
  return body as Body;
}

/** Rejects fields not in `allowed` (a typo must not be silently ignored). */
export function onlyFields(body: Body, allowed: readonly string[]): void {
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key)) throw invalidRequest(`Unknown field "${key}". Allowed: ${allowed.join(', ')}.`, key);
  }
}

/**
 * A field's value after the rules every typed field shares: absent → undefined (400 when required),
 * null → null where `nullable` allows it, else 400 "must be <kind>".
 */
function present(body: Body, name: string, rule: { required?: boolean; nullable?: boolean }, kind: string): unknown {
  const value = body[name];
  if (value === undefined) {
    if (rule.required) throw invalidRequest(`"${name}" is required.`, name);
    return undefined;
  }
  if (value === null && !(rule.nullable && !rule.required)) throw invalidRequest(`"${name}" must be ${kind}.`, name);
  return value;
}

interface StringRule {
  required?: boolean;
  nullable?: boolean;
  maxLength?: number;
  /** Trimmed value must not be empty. */
  nonEmpty?: boolean;
}

export function stringField(body: Body, name: string, rule: StringRule & { required: true }): string;
export function stringField(body: Body, name: string, rule?: StringRule): string | null | undefined;
export function stringField(body: Body, name: string, rule: StringRule = {}): string | null | undefined {
  const value = present(body, name, rule, 'a string');
  if (value === undefined || value === null) return value;
  if (typeof value !== 'string') throw invalidRequest(`"${name}" must be a string.`, name);
  const trimmed = value.trim();
  if ((rule.nonEmpty || rule.required) && trimmed === '') throw invalidRequest(`"${name}" must not be empty.`, name);
  if (rule.maxLength !== undefined && trimmed.length > rule.maxLength) {
    throw invalidRequest(`"${name}" must be at most ${rule.maxLength} characters.`, name);
  }
  if (rule.nullable && trimmed === '') return null;
  return trimmed;
}

interface NumberRule {
  required?: boolean;
  nullable?: boolean;
  integer?: boolean;
  min?: number;
  max?: number;
  /** `min` itself is not allowed (e.g. rpm > 0). */
  exclusiveMin?: boolean;
}

export function numberField(body: Body, name: string, rule: NumberRule & { required: true }): number;
export function numberField(body: Body, name: string, rule?: NumberRule): number | null | undefined;
export function numberField(body: Body, name: string, rule: NumberRule = {}): number | null | undefined {
  const value = present(body, name, rule, 'a number');
  if (value === undefined || value === null) return value;
  if (typeof value !== 'number' || !Number.isFinite(value)) throw invalidRequest(`"${name}" must be a number.`, name);
  return checkRange(value, name, rule);
}

function checkRange(value: number, name: string, rule: NumberRule): number {
  if (rule.integer && !Number.isSafeInteger(value)) throw invalidRequest(`"${name}" must be a whole number.`, name);
  if (rule.min !== undefined && (value < rule.min || (rule.exclusiveMin && value === rule.min))) {
    throw invalidRequest(`"${name}" must be ${rule.exclusiveMin ? 'greater than' : 'at least'} ${rule.min}.`, name);
  }
  if (rule.max !== undefined && value > rule.max) throw invalidRequest(`"${name}" must be at most ${rule.max}.`, name);
  return value;
}

export function booleanField(body: Body, name: string): boolean | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw invalidRequest(`"${name}" must be true or false.`, name);
  return value;
}

export function enumField<T extends string>(body: Body, name: string, values: readonly T[]): T | undefined {
  const value = body[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !(values as readonly string[]).includes(value)) {
    throw invalidRequest(`"${name}" must be one of: ${values.join(', ')}.`, name);
  }
  return value as T;
}

/** An ISO-8601 timestamp (or `YYYY-MM-DD`) as epoch ms. */
export function parseTimestamp(value: string, name: string): number {
  const ms = /^\d{4}-\d{2}-\d{2}$/.test(value) ? Date.parse(`${value}T00:00:00Z`) : Date.parse(value);
  // V8 rolls impossible dates over (2026-02-31 → March 3): the date part must survive a round trip.
  const datePart = value.slice(0, 10);
  const realDate = !Number.isNaN(Date.parse(`${datePart}T00:00:00Z`)) && new Date(`${datePart}T00:00:00Z`).toISOString().startsWith(datePart);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(ms) || !realDate) {
    throw invalidRequest(`"${name}" must be an ISO-8601 date or timestamp, e.g. 2026-11-21 or 2026-11-21T09:30:00Z.`, name);
  }
  return ms;
}

const DAY_MS = 86_400_000;
/** The earliest instant a query's date may name: no request predates the gateway. */
export const EARLIEST_QUERY_MS = Date.UTC(2000, 0, 1);
/** How far past now a query's date may reach: a year (a period ending next month is fine, year 9999 is not). */
export const QUERY_FUTURE_MS = 366 * DAY_MS;

/**
 * A `from` / `to` query parameter (`parseTimestamp`) as epoch ms, between 2000-01-01 and one year
 * after `nowMs`. Everything the admin API does with dates (day walks, ISO strings) then stays in
 * four-digit years. 400 `invalid_request` naming `name` otherwise.
 */
export function parseQueryTime(value: string, name: string, nowMs: number): number {
  const ms = parseTimestamp(value, name);
  const latestMs = nowMs + QUERY_FUTURE_MS;
  if (ms < EARLIEST_QUERY_MS || ms > latestMs) {
    throw invalidRequest(`"${name}" must be between 2000-01-01 and ${new Date(latestMs).toISOString().slice(0, 10)} (one year from now).`, name);
  }
  return ms;
}

/** A query parameter; empty strings count as absent. */
export function queryString(query: URLSearchParams, name: string): string | undefined {
  const value = query.get(name);
  return value === null || value.trim() === '' ? undefined : value.trim();
}

/** An integer query parameter with a default and a range. */
export function queryInt(query: URLSearchParams, name: string, rule: { default: number; min: number; max: number }): number;
export function queryInt(query: URLSearchParams, name: string, rule: { min: number; max: number }): number | undefined;
export function queryInt(query: URLSearchParams, name: string, rule: { default?: number; min: number; max: number }): number | undefined {
  const raw = queryString(query, name);
  if (raw === undefined) return rule.default;
  if (!/^-?\d+$/.test(raw)) throw invalidRequest(`"${name}" must be a whole number.`, name);
  return checkRange(Number(raw), name, { min: rule.min, max: rule.max });
}

/** A numeric id path parameter; a non-number is the same 404 as an unknown id. */
export function idParam(value: string | undefined, onMissing: () => Error): number {
  if (!value || !/^\d{1,15}$/.test(value)) throw onMissing();
  return Number(value);
}
