/**
 * The audit log's contract (docs/audit.md): who changed what, when and from where, one row per
 * state-changing admin, CLI or portal action, in an append-only table whose rows are chained by SHA-256
 * (`audit-hash.ts`), so an edited, inserted or deleted row is found by `verifyAuditChain`.
 */

/** Who acted: a signed-in admin, the CLI (`cli:<os user>`), a portal user, or the gateway itself. */
export type AuditActorKind = 'admin' | 'cli' | 'portal' | 'system';

/** What a caller of `appendAudit` states about one action. Objects are redacted (`redactSecrets`) before they are stored. */
export interface AuditEntry {
  /** Admin username, `cli:<os user>`, the portal user's email, or `system`. */
  actor: string;
  actorKind: AuditActorKind;
  /** The admin's role (`admin`, `viewer`, `team-admin`); null for the CLI and the system. */
  role?: string | null;
  /** The client's address; null for the CLI. */
  ip?: string | null;
  /** `<object type plural>.<verb>`, e.g. `users.update`, `keys.revoke`, `session.login`. */
  action: string;
  objectType?: string | null;
  objectId?: string | number | null;
  /** The object before and after the action (any JSON value); undefined or null = not told / none. */
  before?: unknown;
  after?: unknown;
  /** The `x-request-id` of the admin request; null for the CLI. */
  requestId?: string | null;
}

/** One stored row, as `listAudit` returns it (`before`/`after` parsed back from their JSON text). */
export interface AuditRow {
  id: number;
  /** ISO-8601 UTC. */
  at: string;
  actor: string;
  actor_kind: AuditActorKind;
  role: string | null;
  ip: string | null;
  action: string;
  object_type: string | null;
  object_id: string | null;
  before: unknown;
  after: unknown;
  request_id: string | null;
  prev_hash: string;
  hash: string;
}

/** `verifyAuditChain`'s answer: `ok`, how many rows were read, and the first bad row with the reason. */
export interface AuditVerification {
  ok: boolean;
  rows: number;
  /** The first row found wrong (for a deleted row: the id that is missing); null when `ok`. */
  firstBadId: number | null;
  /** Why, in words; null when `ok`. */
  reason: string | null;
}
