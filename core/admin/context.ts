/**
 * The seam between the admin router and its route modules (`docs/admin-api.md`). Each module exports
 * `createXRoutes(ctx: AdminContext): AdminRoute[]`; the router matches method + pattern, checks the
 * session and the Origin, parses the JSON body, and renders what the handler returns (or throws: a
 * `GatewayError` from `core/errors.ts` becomes the contract's error body).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Store } from '../store/store.ts';
import type { Log } from '../runtime/log.ts';
import type { Clock } from '../runtime/clock.ts';
import type { ServiceRegistry } from '../services.ts';
import type { KeyringSource } from '../store/data-dir.ts';
import type { AuditActorKind } from '../audit/audit.ts';

export interface AdminContext {
  readonly store: Store;
  readonly log: Log;
  /** Wall clock (tests set it); read time here, never `Date.now()`. */
  readonly clock: Clock;
  /** What the plugins offer (`pricing`, `budget`, `rateLimit`, `requestLog`, ...); absent plugin = undefined. */
  readonly services: ServiceRegistry;
  /** Master keys for provider credentials. */
  readonly keyring: KeyringSource;
  /** `http://host:port` this gateway listens on, for calls to itself (key test). Known once listening. */
  selfOrigin(): string;
  /**
   * Tells every cache that watches the database (auth-guard keys, budgets, prices, credentials) that
   * this process just wrote to it. Call after every admin write.
   */
  notifyChange(): void;
}

/**
 * What a signed-in admin may do (docs/admin-api.md "Roles"): `admin` everything; `viewer` read-only
 * (every GET, plus the routes marked `access: 'any'`: their own session); `team-admin` only the routes
 * marked `access: 'team'` (each handler scopes them to `AdminIdentity.teams` with `assertTeamScope`)
 * and `access: 'any'`. A password sign-in is `admin`; single sign-on maps the role from a claim.
 */
export type AdminRole = 'admin' | 'viewer' | 'team-admin';

export const ADMIN_ROLES: readonly AdminRole[] = ['admin', 'viewer', 'team-admin'];

/** The signed-in admin of a request. */
export interface AdminIdentity {
  id: number;
  username: string;
  role: AdminRole;
  /** The names of the teams a `team-admin` manages; empty for the other roles. */
  teams: readonly string[];
}

export interface AdminRequest {
  readonly method: string;
  /** Path parameters from the pattern, URL-decoded (`:model` may contain `/` as `%2F`). */
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** Parsed JSON body for POST/PUT/PATCH (`{}` when empty); undefined for GET/DELETE. */
  readonly body: unknown;
  /** Null only on routes declared `public` (login). */
  readonly admin: AdminIdentity | null;
  readonly requestId: string;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  /**
   * States what this request changed, for its audit-log row (docs/audit.md): the router writes exactly
   * one row after a state-changing route succeeded (status < 400), from the last report, or a default
   * one (action from the method and pattern, no before/after) when the handler reported nothing. A GET
   * that reports (a sign-in callback) is recorded too. One line in a handler:
   * `request.audit({ action: 'teams.update', objectType: 'team', objectId: id, before, after })`.
   * `audit(false)`: this request changed nothing after all (a dry run): no row.
   */
  audit(this: void, report: AuditReport | false): void;
}

/** What a handler tells the audit log about its request (`AdminRequest.audit`); secrets in before/after are redacted when stored. */
export interface AuditReport {
  /** `<objects>.<verb>`, e.g. `users.update`; default: from the method and the route's pattern. */
  action?: string;
  /** e.g. `user`, `key`, `credential`; default: the pattern's first segment. */
  objectType?: string;
  /** Default: the route's last path parameter. */
  objectId?: string | number | null;
  /** The object before / after the change (any JSON value; null for none, e.g. before a create). */
  before?: unknown;
  after?: unknown;
  /** The actor, on a route without a session (a sign-in names who just signed in); default: the session's admin. */
  actor?: { name: string; kind: AuditActorKind; role?: string | null };
}

/**
 * What a handler returns: a JSON reply, or `'sent'` when it wrote the response itself (CSV stream,
 * cookies). `status` 204 sends no body.
 */
export type AdminReply = { status: number; body?: unknown; headers?: Record<string, string> } | 'sent';

export type AdminMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface AdminRoute {
  method: AdminMethod;
  /** e.g. `/admin/api/users/:id/keys`; a `:name` matches one path segment. */
  pattern: string;
  /** Reachable without a session (login, and the session probe). */
  public?: boolean;
  /**
   * Which roles besides `admin` may call it (`AdminRole`). Unset: a `viewer` may call it when it is a
   * GET, a `team-admin` never. `'any'`: every signed-in role (their own session: me, logout). `'team'`:
   * also a `team-admin`, whose handler must then keep to `admin.teams` (`assertTeamScope`); a viewer
   * still only on GET.
   */
  access?: 'any' | 'team';
  /** `false` on a POST that changes nothing (a calculation, a test call): no audit row. */
  audit?: false;
  handler(request: AdminRequest): AdminReply | Promise<AdminReply>;
}

/** Shorthand for a JSON reply. */
export function json(status: number, body: unknown, headers?: Record<string, string>): AdminReply {
  return headers ? { status, body, headers } : { status, body };
}
