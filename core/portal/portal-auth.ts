/**
 * Portal sign-in with the organisation's identity provider (docs/portal.md "Signing in"): the same
 * OpenID Connect client and provider as the admin UI's single sign-on (`admin.oidc`), a flow cookie of
 * its own (`PORTAL_FLOW`: a portal flow cannot finish an admin sign-in, nor the reverse), and the
 * gateway user matched (or created, with `portal.createUsers`) by the verified email.
 *
 * `GET /portal/auth/login` sends the browser to the provider (authorization code + PKCE, state and
 * nonce); `GET /portal/auth/callback` checks the answer, requires a verified email (in
 * `admin.oidc.allowedDomains` when set: the same organisation as the admins), signs the user in
 * (`signInPortalUser`) and redirects to `/portal/` with the session cookie. Refusals are HTML pages
 * (browser navigations), with the catalog's status and code. The role mapping of admins does not
 * apply: every member of the organisation may use the portal, and sees only their own data.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gatewayError, GatewayError } from '../errors.ts';
import type { OidcSettings } from '../manifest.ts';
import type { Store } from '../store/store.ts';
import type { Log } from '../runtime/log.ts';
import type { Clock } from '../runtime/clock.ts';
import type { KeyringSource } from '../store/data-dir.ts';
import { OidcSignInError, type OidcClient } from '../accounts/oidc-client.ts';
import { clearFlowCookie, flowCookie, PORTAL_FLOW, readFlowCookie } from '../admin/oidc-flow-cookie.ts';
import { requestOrigin, sendSignInFailedPage } from '../admin/oidc-routes.ts';
import { signInPortalUser } from './portal-sign-in.ts';

export const PORTAL_LOGIN_PATH = '/portal/auth/login';
export const PORTAL_CALLBACK_PATH = '/portal/auth/callback';

export interface PortalAuthDeps {
  store: Store;
  log: Log;
  clock: Clock;
  keyring: KeyringSource;
  client: OidcClient;
  settings: OidcSettings;
  /** `portal.createUsers`. */
  createUsers: boolean;
  /** `portal.redirectUrl`, else `<origin>/portal/auth/callback`. */
  redirectUrl?: string;
  /** Starts a portal session for the user; returns its `Set-Cookie` value. */
  startSession(req: IncomingMessage, gatewayUserId: number): Promise<string>;
}

/** Handles `/portal/auth/*`: the two sign-in routes, 404 for anything else. */
export function createPortalAuth(deps: PortalAuthDeps): (req: IncomingMessage, res: ServerResponse, requestId: string, path: string) => Promise<void> {
  const fail = (req: IncomingMessage, res: ServerResponse, requestId: string, error: GatewayError) =>
    sendSignInFailedPage(req, res, requestId, error, PORTAL_FLOW, '/portal/');

  async function login(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
    try {
      const redirectUrl = deps.redirectUrl ?? requestOrigin(req) + PORTAL_CALLBACK_PATH;
      const { url, flow } = await deps.client.beginSignIn({ redirectUrl });
      res.writeHead(302, { location: url, 'set-cookie': flowCookie(req, flow, deps.keyring.get(), deps.clock(), PORTAL_FLOW), 'cache-control': 'no-store', 'x-request-id': requestId });
      res.end();
    } catch (err) {
      deps.log.warn('portal sso: could not start a sign-in', { requestId, err: String(err) });
      fail(req, res, requestId, gatewayError('sso_failed', { message: 'The identity provider cannot be reached or is misconfigured. Try again later, or ask an administrator.' }));
    }
  }

  async function callback(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> {
    const flow = readFlowCookie(req, deps.keyring.get(), deps.clock(), PORTAL_FLOW);
    if (!flow) {
      fail(req, res, requestId, gatewayError('sso_failed', { message: 'This sign-in expired or was started in another browser. Start again from the sign-in page.' }));
      return;
    }
    let identity;
    try {
      identity = await deps.client.finishSignIn(new URL(req.url ?? '/', 'http://callback.invalid'), flow);
    } catch (err) {
      deps.log.warn('portal sso: sign-in refused', { requestId, reason: err instanceof OidcSignInError ? err.message : String(err) });
      fail(req, res, requestId, gatewayError('sso_failed'));
      return;
    }
    const refused = portalRefusal(identity.email, identity.emailVerified, deps.settings.allowedDomains);
    if (refused) {
      deps.log.warn('portal sso: identity not allowed', { requestId, email: identity.email, sub: identity.sub, reason: refused });
      fail(req, res, requestId, gatewayError('sso_forbidden', { message: refused }));
      return;
    }
    let userId: number;
    try {
      userId = (await signInPortalUser(deps.store, { email: identity.email!, name: identity.name }, { createUsers: deps.createUsers })).id;
    } catch (err) {
      if (!(err instanceof GatewayError)) throw err;
      deps.log.warn('portal sso: no gateway user for this identity', { requestId, email: identity.email, reason: err.message });
      fail(req, res, requestId, gatewayError('sso_forbidden', { message: err.message }));
      return;
    }
    const sessionCookie = await deps.startSession(req, userId);
    deps.log.info('portal user signed in', { userId, email: identity.email });
    res.writeHead(302, { location: '/portal/', 'cache-control': 'no-store', 'x-request-id': requestId, 'set-cookie': [sessionCookie, clearFlowCookie(req, PORTAL_FLOW)] });
    res.end();
  }

  return async (req, res, requestId, path) => {
    if (req.method === 'GET' && path === PORTAL_LOGIN_PATH) return login(req, res, requestId);
    if (req.method === 'GET' && path === PORTAL_CALLBACK_PATH) return callback(req, res, requestId);
    fail(req, res, requestId, gatewayError('not_found', { message: 'No such sign-in page. Start from /portal/.' }));
  };
}

/** Why this identity may not use the portal, or null: a verified email is required (an unverified one could be anyone's), in `allowedDomains` when set. */
function portalRefusal(email: string | null, verified: boolean, allowedDomains: readonly string[] | undefined): string | null {
  if (!email) return 'The identity provider sent no email address for your account.';
  if (!verified) return `Your email address ${email} is not verified at the identity provider.`;
  const domain = email.slice(email.lastIndexOf('@') + 1);
  if (allowedDomains && !allowedDomains.some((d) => d.toLowerCase() === domain)) return `Accounts of ${domain} may not use this gateway's portal.`;
  return null;
}
