/** Admin accounts for the web UI (`admin_users`): usernames with scrypt password hashes. */
import type { Kysely } from 'kysely';
import type { Database } from './db-types.ts';
import { nowIso } from './db.ts';
import { hashPassword } from './passwords.ts';

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
