/**
 * Admin sessions, stored server-side in `admin_sessions`: the cookie carries a random 256-bit token
 * (base64url), the table only its SHA-256, so neither a leaked database nor a log line can be
 * replayed. A session ends `sessionMaxHours` after login (absolute) or `sessionIdleMinutes` after its
 * last request (idle), whichever is first; `last_seen_at` is written at most once a minute so browsing
 * the UI does not turn every read into a write. Sessions survive a restart. Kysely queries, so the
 * same code runs on SQLite and PostgreSQL (a session check is one indexed read per admin request).
 */
import type { Store } from '../store/store.ts';
import { nowIso } from '../store/store.ts';
import type { Clock } from '../runtime/clock.ts';
import type { AdminIdentity, AdminRole } from './context.ts';
import { ADMIN_ROLES } from './context.ts';
import { endedBounds, hashSessionToken, newSession, sessionState, sessionTimes, type SessionSettings, type SessionTimes } from './session-lifecycle.ts';

export const SESSION_COOKIE = 'tollgate_session';
export type { SessionSettings, SessionTimes } from './session-lifecycle.ts';

/** Every method is asynchronous: a query on either engine (`store.db`). */
export interface SessionStore {
  /** Starts a session; `token` goes into the cookie and is not kept. */
  create(admin: AdminIdentity, meta: { ip: string | null; userAgent: string | null }): Promise<{ token: string; times: SessionTimes }>;
  /** The session's admin, or null when the token is unknown or the session ended (it is then deleted). */
  verify(token: string): Promise<{ admin: AdminIdentity; times: SessionTimes } | null>;
  destroy(token: string): Promise<void>;
  /** Ends every session of admin `adminId` but the one of `keepToken`; returns how many ended. */
  destroyOthers(adminId: number, keepToken: string): Promise<number>;
  /** Deletes every ended session; returns how many. */
  purgeExpired(): Promise<number>;
}

/** A stored role; anything unknown reads as the least one (`viewer`), never as `admin`. */
function roleOf(stored: string): AdminRole {
  return (ADMIN_ROLES as readonly string[]).includes(stored) ? (stored as AdminRole) : 'viewer';
}

function teamsOf(stored: string): string[] {
  try {
    const parsed: unknown = JSON.parse(stored);
    return Array.isArray(parsed) ? parsed.filter((t): t is string => typeof t === 'string') : [];
  } catch {
    return [];
  }
}

export function createSessionStore(store: Store, clock: Clock, settings: SessionSettings): SessionStore {
  const { db } = store;
  const remove = async (hash: string) => {
    await db.deleteFrom('admin_sessions').where('token_hash', '=', hash).execute();
  };

  const times = (createdAt: string, lastSeenMs: number, expiresAt: string) => sessionTimes(settings, createdAt, lastSeenMs, expiresAt);

  return {
    async create(admin, meta) {
      const nowMs = clock();
      const { token, hash, createdAt, expiresAt } = newSession(settings, nowMs);
      await db.insertInto('admin_sessions').values({
        token_hash: hash, admin_user_id: admin.id, created_at: createdAt, last_seen_at: createdAt, expires_at: expiresAt,
        ip: meta.ip, user_agent: meta.userAgent?.slice(0, 300) ?? null, role: admin.role, teams: JSON.stringify(admin.teams),
      }).execute();
      return { token, times: times(createdAt, nowMs, expiresAt) };
    },
    async verify(token) {
      const hash = hashSessionToken(token);
      const row = await db.selectFrom('admin_sessions as s')
        .innerJoin('admin_users as a', 'a.id', 's.admin_user_id')
        .select(['s.created_at', 's.last_seen_at', 's.expires_at', 's.role', 's.teams', 'a.id', 'a.username'])
        .where('s.token_hash', '=', hash)
        .executeTakeFirst();
      if (!row) return null;
      const nowMs = clock();
      const state = sessionState(settings, nowMs, row);
      if (state === 'ended') {
        await remove(hash);
        return null;
      }
      if (state.touch) await db.updateTable('admin_sessions').set({ last_seen_at: nowIso(nowMs) }).where('token_hash', '=', hash).execute();
      const admin: AdminIdentity = { id: row.id, username: row.username, role: roleOf(row.role), teams: teamsOf(row.teams) };
      return { admin, times: times(row.created_at, state.seenMs, row.expires_at) };
    },
    destroy(token) {
      return remove(hashSessionToken(token));
    },
    async destroyOthers(adminId, keepToken) {
      const result = await db.deleteFrom('admin_sessions')
        .where('admin_user_id', '=', adminId)
        .where('token_hash', '<>', hashSessionToken(keepToken))
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
    async purgeExpired() {
      const { expiredAt, idleSince } = endedBounds(settings, clock());
      const result = await db.deleteFrom('admin_sessions')
        .where((eb) => eb.or([eb('expires_at', '<=', expiredAt), eb('last_seen_at', '<=', idleSince)]))
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
