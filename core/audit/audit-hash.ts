/**
 * The audit chain's hash (schema v24): hex SHA-256 of the previous row's hash, a newline, and a JSON
 * array of the row's fields in a fixed order. `before`/`after` enter as the exact JSON text stored, so
 * a verifier re-hashes the stored bytes and never depends on how a JSON value is re-serialised.
 */
import { createHash } from 'node:crypto';
import type { AuditLogTable } from '../store/db-types.ts';

/** The `prev_hash` of the first row: 64 zeros (the chain head's value before any row). */
export const GENESIS_HASH = '0'.repeat(64);

/** The fields a row's hash covers, in their hashed order (everything but `hash` itself). */
export type HashedAuditFields = Omit<AuditLogTable, 'hash'>;

/** Hex SHA-256 over `prev_hash` + "\n" + the canonical serialisation of `row`'s other fields. */
export function auditRowHash(row: HashedAuditFields): string {
  const fields = [
    row.id, row.at, row.actor, row.actor_kind, row.role, row.ip, row.action, row.object_type, row.object_id,
    row.before, row.after, row.request_id,
  ];
  return createHash('sha256').update(`${row.prev_hash}\n${JSON.stringify(fields)}`).digest('hex');
}

/**
 * `value` as canonical JSON text: object keys sorted, no whitespace; undefined and null → null (no
 * text). Used for `before`/`after`, so the same object is stored as the same text whoever wrote it.
 */
export function canonicalJson(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
}
