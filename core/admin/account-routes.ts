/**
 * `POST /admin/api/account/password` (docs/admin-api.md "Session and protection"): the signed-in admin
 * changes their own password. Body `{"current_password","new_password"}`; the current password is
 * checked (scrypt, `passwords.ts`) so a session left open on someone's screen cannot lock its owner
 * out; the new one needs `MIN_ADMIN_PASSWORD_LENGTH` characters. On success every other session of
 * that admin ends (a changed password is often a leaked one) and this one stays. Answers 200
 * `{"admin","other_sessions_ended"}`; 400 `invalid_request` with `param` for a wrong current password
 * or a short new one (not 401: the session is fine, and the UI treats 401 as "signed out").
 * Checking the current password is a password guess like a login's, so it goes through the login
 * throttle (`login-throttle.ts`) under the admin's username and the client's address, counted with
 * the logins: a stolen session cannot guess the password (and so learn one that may be reused
 * elsewhere) faster than the login page allows; refused with 429 `too_many_login_attempts`.
 */
import { invalidRequest } from '../errors.ts';
import { sessionRequired, tooManyLoginAttempts } from './session-errors.ts';
import { verifyPassword } from '../accounts/passwords.ts';
import { MIN_ADMIN_PASSWORD_LENGTH, setAdminPassword } from '../accounts/admin-users.ts';
import type { AdminContext, AdminRoute } from './context.ts';
import { json } from './context.ts';
import { objectBody, onlyFields, type Body } from './fields.ts';
import { readCookie } from './router.ts';
import { SESSION_COOKIE, type SessionStore } from './sessions.ts';
import type { LoginThrottle } from '../coordination/login-throttle.ts';
import { clientAddress } from './auth-routes.ts';

/** Longest password accepted, in characters: scrypt hashes anything, but a megabyte is no password. */
const MAX_PASSWORD_LENGTH = 1024;

/** A password field as sent (never trimmed: spaces are characters of a password). */
function passwordField(body: Body, name: string): string {
  const value = body[name];
  if (typeof value !== 'string' || value === '') throw invalidRequest(`"${name}" is required.`, name);
  if (value.length > MAX_PASSWORD_LENGTH) throw invalidRequest(`"${name}" must be at most ${MAX_PASSWORD_LENGTH} characters.`, name);
  return value;
}

export function createAccountRoutes(ctx: AdminContext, deps: { sessions: SessionStore; throttle: LoginThrottle }): AdminRoute[] {
  const findHash = (adminId: number) => ctx.store.db.selectFrom('admin_users').select('password_hash').where('id', '=', adminId).executeTakeFirst();

  return [
    {
      method: 'POST',
      pattern: '/admin/api/account/password',
      async handler({ body, admin, req, audit }) {
        const fields = objectBody(body);
        onlyFields(fields, ['current_password', 'new_password']);
        const current = passwordField(fields, 'current_password');
        const next = passwordField(fields, 'new_password');
        const token = readCookie(req.headers.cookie, SESSION_COOKIE);
        const row = await findHash(admin!.id);
        if (!row || !token) throw sessionRequired();
        const ip = clientAddress(req);
        // Reserved before the (asynchronous) scrypt, as for a login: concurrent guesses are each counted.
        const reserved = await deps.throttle.begin(admin!.username, ip, ctx.clock());
        if ('retryAfterMs' in reserved) throw tooManyLoginAttempts(reserved.retryAfterMs);
        const { attempt } = reserved;
        try {
          if (!(await verifyPassword(current, row.password_hash))) {
            attempt.failed(ctx.clock());
            ctx.log.warn('admin password change refused: wrong current password', { username: admin!.username, ip });
            throw invalidRequest('The current password is wrong.', 'current_password');
          }
          attempt.succeeded();
        } finally {
          attempt.release();
        }
        if (next.length < MIN_ADMIN_PASSWORD_LENGTH) throw invalidRequest(`The new password must be at least ${MIN_ADMIN_PASSWORD_LENGTH} characters.`, 'new_password');
        if (next === current) throw invalidRequest('The new password is the current one.', 'new_password');
        await setAdminPassword(ctx.store.db, admin!.username, next, { endSessions: false });
        const ended = await deps.sessions.destroyOthers(admin!.id, token);
        ctx.log.info('admin changed their password', { username: admin!.username, otherSessionsEnded: ended });
        audit({ action: 'account.password', objectType: 'admin', objectId: admin!.id, after: { other_sessions_ended: ended } });
        return json(200, { admin, other_sessions_ended: ended });
      },
    },
  ];
}
