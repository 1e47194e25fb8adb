/**
 * Admin accounts for the web UI (`admin_users`): usernames with scrypt password hashes, or, for an
 * admin created by single sign-on, `SSO_PASSWORD_HASH`, which no password matches
 * (`verifyPassword` accepts only `scrypt$…`) and which `setAdminPassword` never replaces.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../store/db-types.ts';
import { nowIso } from '../store/store.ts';
import { hashPassword } from './passwords.ts';

/** Shortest admin password accepted, in characters (the CLI, the admin API). */
export const MIN_ADMIN_PASSWORD_LENGTH = 12;

/** The `password_hash` of an admin who signs in only through single sign-on: not a hash, so no password opens it. */
export const SSO_PASSWORD_HASH = 'sso:oidc';

export interface AdminView {
  id: number;
  username: string;
  created_at: string;
}

export async function createAdmin(db: Kysely<Database>, username: string, password: string): Promise<AdminView> {
  const row = await db
    .insertInto('admin_users')
    .values({ username, password_hash: await hashPassword(password), created_at: nowIso() })
    .returning(['id', 'username', 'created_at'])
    .executeTakeFirstOrThrow();
  return row;
}

export async function listAdmins(db: Kysely<Database>): Promise<AdminView[]> {
  return db.selectFrom('admin_users').select(['id', 'username', 'created_at']).orderBy('id').execute();
}

export async function deleteAdmin(db: Kysely<Database>, username: string): Promise<boolean> {
  const result = await db.deleteFrom('admin_users').where('username', '=', username).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function countAdmins(db: Kysely<Database>): Promise<number> {
  const row = await db.selectFrom('admin_users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Sets the password of admin `username` (scrypt, `passwords.ts`). With `endSessions` (the default)
 * every session of that admin ends too, so a password changed because it leaked locks the holder of
 * the old one out at once. Returns the admin's id, or null when no admin has that name or the admin
 * signs in with single sign-on (`adminSignIn`), whom a password must never open.
 */
export async function setAdminPassword(
  db: Kysely<Database>, username: string, password: string, options: { endSessions?: boolean } = {},
): Promise<number | null> {
  const hash = await hashPassword(password);
  return db.transaction().execute(async (trx) => {
    const row = await trx.updateTable('admin_users').set({ password_hash: hash })
      .where('username', '=', username).where('password_hash', '<>', SSO_PASSWORD_HASH).returning('id').executeTakeFirst();
    if (!row) return null;
    if (options.endSessions ?? true) await trx.deleteFrom('admin_sessions').where('admin_user_id', '=', row.id).execute();
    return row.id;
  });
}

/** How admin `username` signs in: `password`, `sso`, or null when no admin has that name. */
export async function adminSignIn(db: Kysely<Database>, username: string): Promise<'password' | 'sso' | null> {
  const row = await db.selectFrom('admin_users').select('password_hash').where('username', '=', username).executeTakeFirst();
  if (!row) return null;
  return row.password_hash === SSO_PASSWORD_HASH ? 'sso' : 'password';
}

/**
 * The id of the single sign-on admin `username` (an email), created on first sign-in with
 * `SSO_PASSWORD_HASH`. Null when a password admin already has that name: single sign-on does not take
 * over a password account (delete it, or sign in with its password). Concurrent first sign-ins
 * (two replicas) both get the one row.
 */
export async function ensureSsoAdmin(db: Kysely<Database>, username: string, nowMs: number): Promise<number | null> {
  await db.insertInto('admin_users')
    .values({ username, password_hash: SSO_PASSWORD_HASH, created_at: nowIso(nowMs) })
    .onConflict((oc) => oc.column('username').doNothing())
    .execute();
  const row = await db.selectFrom('admin_users').select(['id', 'password_hash']).where('username', '=', username).executeTakeFirstOrThrow();
  return row.password_hash === SSO_PASSWORD_HASH ? row.id : null;
}
