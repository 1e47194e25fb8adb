/**
 * `POST /admin/api/account/password` (docs/admin-api.md "Session and protection"): the signed-in admin
 * changes their own password. Body `{"current_password","new_password"}`; the current password is
 * checked (scrypt, `passwords.ts`) so a session left open on someone's screen cannot lock its owner
 * out; the new one needs `MIN_ADMIN_PASSWORD_LENGTH` characters. On success every other session of
 * that admin ends (a changed password is often a leaked one) and this one stays. Answers 200
 * `{"admin","other_sessions_ended"}`; 400 `invalid_request` with `param` for a wrong current password
 * or a short new one (not 401: the session is fine, and the UI treats 401 as "signed out").
 */
import { invalidRequest, sessionRequired } from '../errors.ts';
import { verifyPassword } from '../accounts/passwords.ts';
import { MIN_ADMIN_PASSWORD_LENGTH, setAdminPassword } from '../accounts/admin-users.ts';
import type { AdminContext, AdminRoute } from './context.ts';
import { json } from './context.ts';
import { objectBody, onlyFields, type Body } from './fields.ts';
import { readCookie } from './router.ts';
import { SESSION_COOKIE, type SessionStore } from './sessions.ts';

/** Longest password accepted, in characters: scrypt hashes anything, but a megabyte is no password. */
const MAX_PASSWORD_LENGTH = 1024;

/** A password field as sent (never trimmed: spaces are characters of a password). */
function passwordField(body: Body, name: string): string {
  const value = body[name];
  if (typeof value !== 'string' || value === '') throw invalidRequest(`"${name}" is required.`, name);
  if (value.length > MAX_PASSWORD_LENGTH) throw invalidRequest(`"${name}" must be at most ${MAX_PASSWORD_LENGTH} characters.`, name);
  return value;
}

export function createAccountRoutes(ctx: AdminContext, deps: { sessions: SessionStore }): AdminRoute[] {
  const findHash = (adminId: number) => ctx.store.db.selectFrom('admin_users').select('password_hash').where('id', '=', adminId).executeTakeFirst();

  return [
    {
      method: 'POST',
      pattern: '/admin/api/account/password',
      async handler({ body, admin, req }) {
        const fields = objectBody(body);
        onlyFields(fields, ['current_password', 'new_password']);
        const current = passwordField(fields, 'current_password');
        const next = passwordField(fields, 'new_password');
        const token = readCookie(req.headers.cookie, SESSION_COOKIE);
        const row = await findHash(admin!.id);
        if (!row || !token) throw sessionRequired();
        if (!(await verifyPassword(current, row.password_hash))) {
          ctx.log.warn('admin password change refused: wrong current password', { username: admin!.username });
          throw invalidRequest('The current password is wrong.', 'current_password');
        }
        if (next.length < MIN_ADMIN_PASSWORD_LENGTH) throw invalidRequest(`The new password must be at least ${MIN_ADMIN_PASSWORD_LENGTH} characters.`, 'new_password');
        if (next === current) throw invalidRequest('The new password is the current one.', 'new_password');
        await setAdminPassword(ctx.store.db, admin!.username, next, { endSessions: false });
        const ended = await deps.sessions.destroyOthers(admin!.id, token);
        ctx.log.info('admin changed their password', { username: admin!.username, otherSessionsEnded: ended });
        return json(200, { admin, other_sessions_ended: ended });
      },
    },
  ];
}
