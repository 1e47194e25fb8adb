/**
 * Admin sessions, stored server-side in `admin_sessions`: the cookie carries a random 256-bit token
 * (base64url), the table only its SHA-256, so neither a leaked database nor a log line can be
 * replayed. A session ends `sessionMaxHours` after login (absolute) or `sessionIdleMinutes` after its
 * last request (idle), whichever is first; `last_seen_at` is written at most once a minute so browsing
 * the UI does not turn every read into a write. Sessions survive a restart.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Store } from '../db.ts';
import { nowIso, prepareQuery } from '../db.ts';
import type { Clock } from '../clock.ts';
import type { AdminIdentity } from './context.ts';

export const SESSION_COOKIE = 'tollgate_session';
const TOUCH_EVERY_MS = 60_000;

export interface SessionTimes {
  created_at: string;
  /** Absolute end. */
  expires_at: string;
  /** When the session ends if no request comes before. */
  idle_expires_at: string;
}

export interface SessionSettings {
  idleMs: number;
  maxMs: number;
}

export interface SessionStore {
  /** Starts a session; `token` goes into the cookie and is not kept. */
  create(admin: AdminIdentity, meta: { ip: string | null; userAgent: string | null }): { token: string; times: SessionTimes };
  /** The session's admin, or null when the token is unknown or the session ended (it is then deleted). */
  verify(token: string): { admin: AdminIdentity; times: SessionTimes } | null;
  destroy(token: string): void;
  /** Ends every session of admin `adminId` but the one of `keepToken`; returns how many ended. */
  destroyOthers(adminId: number, keepToken: string): number;
  /** Deletes every ended session. */
  purgeExpired(): number;
}

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function createSessionStore(store: Store, clock: Clock, settings: SessionSettings): SessionStore {
  const { sqlite, db } = store;
  const insert = prepareQuery(
    sqlite,
    db.insertInto('admin_sessions').values({ token_hash: '', admin_user_id: 0, created_at: '', last_seen_at: '', expires_at: '', ip: null, user_agent: null }),
  );
  const find = prepareQuery(
    sqlite,
    db.selectFrom('admin_sessions as s')
      .innerJoin('admin_users as a', 'a.id', 's.admin_user_id')
      .select(['s.created_at', 's.last_seen_at', 's.expires_at', 'a.id', 'a.username'])
      .where('s.token_hash', '=', ''),
  );
  const touch = prepareQuery(sqlite, db.updateTable('admin_sessions').set({ last_seen_at: '' }).where('token_hash', '=', ''));
  const remove = prepareQuery(sqlite, db.deleteFrom('admin_sessions').where('token_hash', '=', ''));
  const removeOthers = sqlite.prepare('DELETE FROM admin_sessions WHERE admin_user_id = ? AND token_hash <> ?');
  const removeEnded = sqlite.prepare('DELETE FROM admin_sessions WHERE expires_at <= ? OR last_seen_at <= ?');

  const times = (createdAt: string, lastSeenMs: number, expiresAt: string): SessionTimes => {
    const idleEnd = lastSeenMs + settings.idleMs;
    const absoluteEnd = Date.parse(expiresAt);
    return { created_at: createdAt, expires_at: expiresAt, idle_expires_at: nowIso(Math.min(idleEnd, absoluteEnd)) };
  };

  return {
    create(admin, meta) {
      const token = randomBytes(32).toString('base64url');
      const nowMs = clock();
      const createdAt = nowIso(nowMs);
      const expiresAt = nowIso(nowMs + settings.maxMs);
      insert.run(hashToken(token), admin.id, createdAt, createdAt, expiresAt, meta.ip, meta.userAgent?.slice(0, 300) ?? null);
      return { token, times: times(createdAt, nowMs, expiresAt) };
    },
    verify(token) {
      const hash = hashToken(token);
      const row = find.get(hash);
      if (!row) return null;
      const nowMs = clock();
      const lastSeenMs = Date.parse(row.last_seen_at);
      if (nowMs >= Date.parse(row.expires_at) || nowMs >= lastSeenMs + settings.idleMs) {
        remove.run(hash);
        return null;
      }
      let seenMs = lastSeenMs;
      if (nowMs - lastSeenMs >= TOUCH_EVERY_MS) {
        touch.run(nowIso(nowMs), hash);
        seenMs = nowMs;
      }
      return { admin: { id: row.id, username: row.username }, times: times(row.created_at, seenMs, row.expires_at) };
    },
    destroy(token) {
      remove.run(hashToken(token));
    },
    destroyOthers(adminId, keepToken) {
      return removeOthers.run(adminId, hashToken(keepToken)).changes;
    },
    purgeExpired() {
      const nowMs = clock();
      return removeEnded.run(nowIso(nowMs), nowIso(nowMs - settings.idleMs)).changes;
    },
  };
}
