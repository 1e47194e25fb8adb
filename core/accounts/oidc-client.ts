/**
 * A relying party for OpenID Connect's authorization code flow with PKCE (RFC 7636, S256), state and
 * nonce, on `openid-client` v6 (OpenID Connect Core 1.0 §3.1). It knows nothing of admins or portals:
 * `beginSignIn` gives the provider URL to send the browser to and the flow secrets the caller keeps
 * (`oidc-flow-cookie.ts` seals them into a cookie); `finishSignIn` takes the callback URL and those
 * secrets back and returns the verified claims. openid-client checks the ID token's signature (the
 * provider's JWKS), `iss`, `aud` (= the client id), `exp`/`iat` against the caller's clock, the nonce,
 * the state and the code verifier; the userinfo `sub` must match the ID token's.
 */
import * as oidc from 'openid-client';
import type { Clock } from '../runtime/clock.ts';

export interface OidcClientSettings {
  /** Issuer URL; discovery reads `<issuer>/.well-known/openid-configuration` and checks its `issuer` matches. */
  issuer: string;
  clientId: string;
  /** Absent: a public client (token endpoint auth `none`, PKCE only); else `client_secret_post`. */
  clientSecret?: string;
  /** e.g. `['openid', 'email', 'profile']`. */
  scopes: readonly string[];
  /** Token times (`exp`, `iat`) are judged against this clock, not `Date.now()`, so tests can move it. */
  clock: Clock;
}

/** What the caller keeps between `beginSignIn` and `finishSignIn` (secret: seal it, never log it). */
export interface OidcFlow {
  state: string;
  nonce: string;
  codeVerifier: string;
  redirectUrl: string;
}

/** Verified identity claims: the common ones typed, every claim (ID token merged with userinfo) in `claims`. */
export interface OidcIdentity {
  sub: string;
  /** Lower-cased. */
  email: string | null;
  /** False when the provider says so or does not say. */
  emailVerified: boolean;
  name: string | null;
  /** All claims; userinfo values win over the ID token's. */
  claims: Readonly<Record<string, unknown>>;
}

export interface OidcClient {
  /**
   * Starts a sign-in: the provider's authorization URL (response_type=code, S256 challenge, state,
   * nonce) and the flow to keep. `redirectUrl` must be registered at the provider. Rejects when
   * discovery fails (the provider is unreachable or its metadata does not match `issuer`).
   */
  beginSignIn(options: { redirectUrl: string }): Promise<{ url: string; flow: OidcFlow }>;
  /**
   * Finishes a sign-in from the callback URL the browser came back to (only its query is read:
   * `?code&state&iss` or `?error`).
   * Rejects (`OidcSignInError`) on a provider error, a state mismatch, a refused code exchange or an
   * ID token that does not verify.
   */
  finishSignIn(callbackUrl: URL, flow: OidcFlow): Promise<OidcIdentity>;
  /** The provider's RP-initiated logout URL (OpenID RP-Initiated Logout 1.0), or null when it advertises none. */
  endSessionUrl(options: { postLogoutRedirectUrl: string }): Promise<string | null>;
}

/** A sign-in that did not verify; `message` names why (safe to log: no token, code or secret in it). */
export class OidcSignInError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'OidcSignInError';
  }
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Creates a client; discovery runs on first use and is retried on the next call when it failed. */
export function createOidcClient(settings: OidcClientSettings): OidcClient {
  const issuerUrl = new URL(settings.issuer);
  // The manifest allows plain http only on loopback (local testing); openid-client refuses it unless told.
  const insecure = issuerUrl.protocol === 'http:' && LOOPBACK.has(issuerUrl.hostname);
  const auth = settings.clientSecret ? oidc.ClientSecretPost(settings.clientSecret) : oidc.None();
  let discovered: Promise<oidc.Configuration> | null = null;

  function discover(): Promise<oidc.Configuration> {
    discovered ??= oidc.discovery(issuerUrl, settings.clientId, undefined, auth, insecure ? { execute: [oidc.allowInsecureRequests] } : undefined)
      .catch((err: unknown) => {
        discovered = null;
        throw new OidcSignInError(`OpenID discovery at ${settings.issuer} failed: ${describe(err)}`, { cause: err });
      });
    return discovered;
  }

  /** A configuration whose notion of "now" is `settings.clock` (openid-client's `clockSkew`, in seconds). */
  async function configNow(): Promise<oidc.Configuration> {
    const base = await discover();
    const skewSec = Math.round((settings.clock() - Date.now()) / 1000);
    const config = new oidc.Configuration(base.serverMetadata(), settings.clientId, { ...(settings.clientSecret ? { client_secret: settings.clientSecret } : {}), [oidc.clockSkew]: skewSec }, auth);
    if (insecure) oidc.allowInsecureRequests(config);
    const jwks = oidc.getJwksCache(base);
    if (jwks) oidc.setJwksCache(config, jwks);
    return config;
  }

  return {
    async beginSignIn({ redirectUrl }) {
      const config = await discover();
      const flow: OidcFlow = { state: oidc.randomState(), nonce: oidc.randomNonce(), codeVerifier: oidc.randomPKCECodeVerifier(), redirectUrl };
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUrl, response_type: 'code', scope: settings.scopes.join(' '),
        code_challenge: await oidc.calculatePKCECodeChallenge(flow.codeVerifier), code_challenge_method: 'S256',
        state: flow.state, nonce: flow.nonce,
      });
      return { url: url.href, flow };
    },
    async finishSignIn(callbackUrl, flow) {
      const config = await configNow();
      try {
        // The token request's redirect_uri must be the authorization request's, whatever host the browser
        // came back through (a proxy): openid-client takes it from the URL without its query.
        const current = new URL(flow.redirectUrl);
        current.search = callbackUrl.search;
        const tokens = await oidc.authorizationCodeGrant(config, current, {
          pkceCodeVerifier: flow.codeVerifier, expectedState: flow.state, expectedNonce: flow.nonce, idTokenExpected: true,
        });
        const idClaims = tokens.claims();
        if (!idClaims) throw new OidcSignInError('the provider returned no ID token');
        // Providers often keep email and groups out of the ID token (oidc-provider's conformIdTokenClaims, Keycloak
        // mappers set to userinfo only): ask userinfo when it exists; its sub must be the ID token's.
        const userinfo = config.serverMetadata().userinfo_endpoint ? await oidc.fetchUserInfo(config, tokens.access_token, idClaims.sub) : {};
        const base = await discover();
        const jwks = oidc.getJwksCache(config);
        if (jwks) oidc.setJwksCache(base, jwks);
        return identityOf({ ...idClaims, ...userinfo, sub: idClaims.sub });
      } catch (err) {
        if (err instanceof OidcSignInError) throw err;
        throw new OidcSignInError(describe(err), { cause: err });
      }
    },
    async endSessionUrl({ postLogoutRedirectUrl }) {
      const config = await discover();
      if (!config.serverMetadata().end_session_endpoint) return null;
      return oidc.buildEndSessionUrl(config, { client_id: settings.clientId, post_logout_redirect_uri: postLogoutRedirectUrl }).href;
    },
  };
}

function identityOf(claims: Record<string, unknown>): OidcIdentity {
  const email = typeof claims.email === 'string' && claims.email !== '' ? claims.email.toLowerCase() : null;
  return {
    sub: String(claims.sub),
    email,
    emailVerified: claims.email_verified === true || claims.email_verified === 'true',
    name: typeof claims.name === 'string' ? claims.name : null,
    claims,
  };
}

/** An error's message with the OAuth `error`/`error_description` openid-client attaches, never a token. */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const oauthError = err as Error & { error?: string; error_description?: string; code?: string };
  const detail = oauthError.error ? ` (${oauthError.error}${oauthError.error_description ? `: ${oauthError.error_description}` : ''})` : '';
  return `${err.message}${detail}`;
}
