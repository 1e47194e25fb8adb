/**
 * Who a portal sign-in is (docs/portal.md "Sign-in"): the identity provider vouches for an email, and
 * the portal serves the gateway user with that email, compared case-insensitively. When none has it,
 * `portal.createUsers` decides: create one (named after the person, unlimited budget as any new
 * user; an admin sets limits later), or refuse.
 *
 * The seam for single sign-on: the OIDC callback calls `signInPortalUser(store, { email, name },
 * { createUsers: manifest.portal.createUsers })` with the verified ID token's `email` and `name`
 * claims (only when `email_verified` is not false), then `PortalMount.startSession(req, user.id)`
 * and sets the cookie it returns. Nothing else signs a gateway user in.
 */
import { sql } from 'kysely';
import type { Store } from '../store/store.ts';
import { isUniqueViolation } from '../store/store.ts';
import { invalidRequest, permissionDenied } from '../errors.ts';
import { createGatewayUser, toUserView, type GatewayUserView } from '../accounts/gateway-users.ts';

/** What the identity provider said about the person. */
export interface PortalIdentity {
  /** Verified email address; matched case-insensitively. */
  email: string;
  /** Display name (the `name` claim); the new user's name when one is created, else unused. */
  name?: string | null;
}

export interface PortalSignInOptions {
  /** `portal.createUsers`: create a gateway user when none has the email. */
  createUsers: boolean;
}

const EMAIL = /^[^\s@]+@[^\s@]+$/;
const MAX_NAME_LENGTH = 100;

/**
 * The gateway user a portal sign-in acts as. Throws 400 `invalid_request` for a missing or malformed
 * email, 403 `permission_denied` when no user has the email and `createUsers` is false, when several
 * users share it (an admin must resolve that), or when the user is disabled.
 */
export async function signInPortalUser(store: Store, identity: PortalIdentity, options: PortalSignInOptions): Promise<GatewayUserView> {
  const email = identity.email.trim();
  if (!EMAIL.test(email) || email.length > 320) throw invalidRequest('The identity provider gave no usable email address.', 'email');
  const rows = await usersWithEmail(store, email);
  if (rows.length > 1) throw permissionDenied(`Several gateway users have the email ${email}; ask an administrator to keep it on one.`);
  if (rows.length === 1) {
    const user = toUserView(rows[0]!);
    if (user.disabled) throw permissionDenied('Your gateway user is disabled; ask an administrator.');
    return user;
  }
  if (!options.createUsers) throw permissionDenied(`No gateway user has the email ${email}; ask an administrator to create one.`);
  return createNamed(store, email, identity.name);
}

/** At most two users whose email is `email` (case-insensitively), oldest first. */
function usersWithEmail(store: Store, email: string) {
  return store.db.selectFrom('gateway_users').selectAll()
    .where(sql<string>`lower(email)`, '=', email.toLowerCase())
    .orderBy('id')
    .limit(2)
    .execute();
}

/**
 * A new user named after the person, or after their email when that name is taken. A name clash may
 * also be the same person signing in twice at once: their user, created by the other sign-in, wins.
 */
async function createNamed(store: Store, email: string, name: string | null | undefined): Promise<GatewayUserView> {
  const candidates = [name?.trim().slice(0, MAX_NAME_LENGTH), email.slice(0, MAX_NAME_LENGTH)].filter((n): n is string => Boolean(n));
  for (const candidate of [...new Set(candidates)]) {
    try {
      return await createGatewayUser(store.db, { name: candidate, email });
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
      const existing = await usersWithEmail(store, email);
      if (existing.length > 0) return toUserView(existing[0]!);
    }
  }
  return createGatewayUser(store.db, { name: `${email.slice(0, MAX_NAME_LENGTH - 12)}-${Date.now().toString(36)}`, email });
}
