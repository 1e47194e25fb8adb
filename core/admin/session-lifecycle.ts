/**
 * What an admin session (`sessions.ts`) and a portal session (`core/portal/portal-sessions.ts`) share:
 * a random 256-bit token (base64url) for the cookie of which the table keeps only the SHA-256, an
 * absolute end `maxMs` after sign-in, an idle end `idleMs` after the last request, and `last_seen_at`
 * written at most once a minute so browsing does not turn every read into a write.
 */
import { createHash, randomBytes } from 'node:crypto';
import { nowIso } from '../store/store.ts';

/** How often `last_seen_at` is written, at most, ms. */
export const TOUCH_EVERY_MS = 60_000;

export interface SessionSettings {
  idleMs: number;
  maxMs: number;
}

/** A session's times as the APIs show them (ISO-8601 UTC). */
export interface SessionTimes {
  created_at: string;
  /** Absolute end. */
  expires_at: string;
  /** When the session ends if no request comes before. */
  idle_expires_at: string;
}

/** The stored hash of a cookie's token: hex SHA-256. */
export function hashSessionToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** A fresh token and its hash; `createdAt`/`expiresAt` of a session started at `nowMs`. */
export function newSession(settings: SessionSettings, nowMs: number): { token: string; hash: string; createdAt: string; expiresAt: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashSessionToken(token), createdAt: nowIso(nowMs), expiresAt: nowIso(nowMs + settings.maxMs) };
}

export function sessionTimes(settings: SessionSettings, createdAt: string, lastSeenMs: number, expiresAt: string): SessionTimes {
  return { created_at: createdAt, expires_at: expiresAt, idle_expires_at: nowIso(Math.min(lastSeenMs + settings.idleMs, Date.parse(expiresAt))) };
}

/**
 * A stored session at `nowMs`: `ended` (past its absolute or idle end: delete it), else whether its
 * `last_seen_at` is due to be written and the last-seen time to report.
 */
export function sessionState(settings: SessionSettings, nowMs: number, row: { last_seen_at: string; expires_at: string }): 'ended' | { touch: boolean; seenMs: number } {
  const lastSeenMs = Date.parse(row.last_seen_at);
  if (nowMs >= Date.parse(row.expires_at) || nowMs >= lastSeenMs + settings.idleMs) return 'ended';
  const touch = nowMs - lastSeenMs >= TOUCH_EVERY_MS;
  return { touch, seenMs: touch ? nowMs : lastSeenMs };
}

/** The bounds below which a session has ended, for a purge: `expires_at <= expiredAt` or `last_seen_at <= idleSince`. */
export function endedBounds(settings: SessionSettings, nowMs: number): { expiredAt: string; idleSince: string } {
  return { expiredAt: nowIso(nowMs), idleSince: nowIso(nowMs - settings.idleMs) };
}
