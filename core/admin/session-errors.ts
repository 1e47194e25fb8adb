/**
 * The admin API's own errors (sign-in, sessions, CSRF), built from the catalog in `core/errors.ts`
 * like every other: their codes, statuses and messages are declared there.
 */
import { gatewayError, type GatewayError } from '../errors.ts';

/** 401 on `/admin/api/*` without a live admin session. */
export function sessionRequired(): GatewayError {
  return gatewayError('session_required');
}

/** 401: admin login with a wrong username or password (one message for both, so names cannot be probed). */
export function invalidCredentials(): GatewayError {
  return gatewayError('invalid_credentials');
}

/** 403: password sign-in is turned off (`admin.oidc.passwordLogin: false`); single sign-on only. */
export function passwordLoginDisabled(): GatewayError {
  return gatewayError('password_login_disabled');
}

/** 429: too many failed admin logins for a username or from an address. */
export function tooManyLoginAttempts(retryAfterMs: number): GatewayError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return gatewayError('too_many_login_attempts', { message: `Too many failed logins. Try again in ${seconds} seconds.`, headers: { 'retry-after': String(seconds) } });
}

/** 403: a mutating admin call from a page that is not the gateway's own (CSRF). */
export function originMismatch(): GatewayError {
  return gatewayError('origin_mismatch');
}

/** 403: the signed-in admin's role (viewer, team-admin) may not call this route. */
export function roleForbidden(role: string, method: string, path: string): GatewayError {
  return gatewayError('role_forbidden', { message: `Your admin role (${role}) may not call ${method} ${path}.` });
}

/** 403: a team-admin asked for a team they do not manage. */
export function teamForbidden(team: string): GatewayError {
  return gatewayError('team_forbidden', { message: `You do not manage team "${team}".` });
}
