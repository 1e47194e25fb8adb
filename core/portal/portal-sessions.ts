/**
 * Portal sessions (docs/portal.md), stored server-side in `portal_sessions` like the admin's
 * (`core/admin/sessions.ts`): the cookie `tollgate_portal` carries a random 256-bit token (base64url),
 * the table only its SHA-256, so neither a leaked database nor a log line can be replayed. A session
 * belongs to a gateway user (never an admin) and ends `maxMs` after sign-in or `idleMs` after its last
 * request, whichever is first; `last_seen_at` is written at most once a minute. Deleting the user ends
 * their sessions (ON DELETE CASCADE), and a disabled user's session stops verifying.
 *
 * The seam for single sign-on: the OIDC callback (issue 43, added after this module) calls
 * `signInPortalUser` (`portal-sign-in.ts`) with the provider's email and name, then
 * `PortalMount.startSession(req, user.id)` (`index.ts`), which creates the session here and returns the
 * `Set-Cookie` value built by `portalSessionCookie`.
 */
import type { IncomingMessage } from 'node:http';
import type { Store } from '../store/store.ts';
import { nowIso } from '../store/store.ts';
import type { Clock } from '../runtime/clock.ts';
import { requestScheme } from '../admin/origin-check.ts';
import { endedBounds, hashSessionToken, newSession, sessionState, sessionTimes, type SessionSettings, type SessionTimes } from '../admin/session-lifecycle.ts';

/** The portal's session cookie; Path=/portal, so the admin UI and the API never receive it. */
export const PORTAL_COOKIE = 'tollgate_portal';
/** The admin session's times and settings (`session-lifecycle.ts`), under the portal's names. */
export type PortalSessionTimes = SessionTimes;
export type PortalSessionSettings = SessionSettings;

/** The signed-in gateway user of a live session. */
export interface PortalPrincipal {
  gatewayUserId: number;
}

/** Every method is one or two queries on either engine (`store.db`). */
export interface PortalSessionStore {
  /** Starts a session for gateway user `gatewayUserId`; `token` goes into the cookie and is not kept. */
  create(gatewayUserId: number, meta: { ip: string | null; userAgent: string | null }): Promise<{ token: string; times: PortalSessionTimes }>;
  /**
   * The session's user, or null when the token is unknown, the session ended (it is then deleted) or
   * the user is disabled.
   */
  verify(token: string): Promise<{ user: PortalPrincipal; times: PortalSessionTimes } | null>;
  destroy(token: string): Promise<void>;
  /** Deletes every ended session; returns how many. */
  purgeExpired(): Promise<number>;
}

/**
 * The `Set-Cookie` value for a portal session: HttpOnly, SameSite=Strict, Path=/portal, Secure when the
 * request came over HTTPS (directly or per `X-Forwarded-Proto`), as the admin cookie. `token` '' with
 * `maxAgeSec` 0 clears it.
 */
export function portalSessionCookie(req: IncomingMessage, token: string, maxAgeSec: number): string {
  const secure = requestScheme(req) === 'https' ? '; Secure' : '';
  return `${PORTAL_COOKIE}=${token}; Path=/portal; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSec}${secure}`;
}

export function createPortalSessionStore(store: Store, clock: Clock, settings: PortalSessionSettings): PortalSessionStore {
  const { db } = store;
  const remove = async (hash: string) => {
    await db.deleteFrom('portal_sessions').where('token_hash', '=', hash).execute();
  };
  const times = (createdAt: string, lastSeenMs: number, expiresAt: string) => sessionTimes(settings, createdAt, lastSeenMs, expiresAt);

  return {
    async create(gatewayUserId, meta) {
      const nowMs = clock();
      const { token, hash, createdAt, expiresAt } = newSession(settings, nowMs);
      await db.insertInto('portal_sessions').values({
        token_hash: hash, gateway_user_id: gatewayUserId, created_at: createdAt, last_seen_at: createdAt, expires_at: expiresAt,
        ip: meta.ip, user_agent: meta.userAgent?.slice(0, 300) ?? null,
      }).execute();
      return { token, times: times(createdAt, nowMs, expiresAt) };
    },
    async verify(token) {
      const hash = hashSessionToken(token);
      const row = await db.selectFrom('portal_sessions as s')
        .innerJoin('gateway_users as u', 'u.id', 's.gateway_user_id')
        .select(['s.created_at', 's.last_seen_at', 's.expires_at', 'u.id', 'u.disabled'])
        .where('s.token_hash', '=', hash)
        .executeTakeFirst();
      if (!row) return null;
      const nowMs = clock();
      const state = sessionState(settings, nowMs, row);
      if (state === 'ended') {
        await remove(hash);
        return null;
      }
      // Kept, not deleted: an admin may enable the user again within the session's life.
      if (row.disabled === 1) return null;
      if (state.touch) await db.updateTable('portal_sessions').set({ last_seen_at: nowIso(nowMs) }).where('token_hash', '=', hash).execute();
      return { user: { gatewayUserId: row.id }, times: times(row.created_at, state.seenMs, row.expires_at) };
    },
    destroy(token) {
      return remove(hashSessionToken(token));
    },
    async purgeExpired() {
      const { expiredAt, idleSince } = endedBounds(settings, clock());
      const result = await db.deleteFrom('portal_sessions')
        .where((eb) => eb.or([eb('expires_at', '<=', expiredAt), eb('last_seen_at', '<=', idleSince)]))
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
