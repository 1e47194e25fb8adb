/**
 * Google credentials of Vertex AI calls: an OAuth 2.0 access token (scope `cloud-platform`) sent as
 * `Authorization: Bearer <token>`, added at dispatch (`UpstreamRequest.authorize`) because getting
 * one may take a round trip to Google's token endpoint.
 *
 * A credential string is either a Google credential JSON (a service-account key; also an
 * `external_account` workload-identity configuration or an `authorized_user` file: whatever
 * `google-auth-library` reads), from the manifest's `credentialsJson`, a pool entry or a user's own
 * credential; or empty, meaning the provider's `credentialsFile` when it has one, else Application
 * Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, gcloud's application-default login, the
 * metadata server of GCE / GKE / Cloud Run). `google-auth-library` keeps each credential's token
 * and fetches a new one when it is within five minutes of its expiry; one `GoogleAuth` is kept per
 * credential, so a token is fetched once and reused by every call until then.
 *
 * A service-account key's `token_uri` is honoured: the library (10.x) always posts its signed JWT
 * assertion to `https://oauth2.googleapis.com/token`, so a key naming another endpoint (a private
 * endpoint, a test's local one) gets a transport that sends the token request there.
 *
 * Sources: https://cloud.google.com/docs/authentication/provide-credentials-adc ;
 * https://developers.google.com/identity/protocols/oauth2/service-account#httprest (the assertion);
 * https://cloud.google.com/vertex-ai/docs/reference/rest (scope `https://www.googleapis.com/auth/cloud-platform`).
 */
import { readFile } from 'node:fs/promises';
import type { GoogleAuth, GoogleAuthOptions } from 'google-auth-library';
import { upstreamError, type GatewayError } from '../../../../core/errors.ts';
import type { UpstreamRequest } from '../../../../core/upstream/upstream-call.ts';
import { upstreamErrorFor } from '../upstream-error-policy.ts';

/**
 * google-auth-library, imported at the first Vertex token rather than at start-up: loading it costs
 * every gateway and CLI process ~0.2 s of CPU, and most never call Vertex.
 */
function googleAuthLibrary() {
  return import('google-auth-library');
}

/** The OAuth scope every Vertex AI call needs. */
export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
/** Where the library sends every service-account token request. */
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
/** Credentials kept at most per provider (a pool and users' own credentials are a few). */
const MAX_CREDENTIALS = 64;

type Authorizer = (request: UpstreamRequest) => Promise<Record<string, string>>;

/** A credential JSON's fields this module reads. */
interface CredentialJson {
  type?: unknown;
  token_uri?: unknown;
}

/** Access tokens of one provider, per credential string (module doc). */
export class VertexTokens {
  private readonly byKey = new Map<string, { auth: Promise<GoogleAuth>; authorize: Authorizer }>();

  constructor(private readonly provider: string, private readonly credentialsFile: string | undefined) {}

  /** The `authorize` function of calls carrying `key` (a credential JSON, or '' for the provider's own). */
  authorizerFor(key: string): Authorizer {
    return this.entryFor(key).authorize;
  }

  /** `{ authorization: 'Bearer …' }` for `key`; rejects with a `GatewayError` when no token can be had. */
  async headersFor(key: string): Promise<Record<string, string>> {
    const auth = await this.entryFor(key).auth;
    let token: string | null | undefined;
    try {
      token = await auth.getAccessToken();
    } catch (err) {
      throw this.tokenError(err);
    }
    if (!token) throw this.tokenError(new Error('the token endpoint answered no access_token'));
    return { authorization: `Bearer ${token}` };
  }

  private entryFor(key: string) {
    let entry = this.byKey.get(key);
    if (!entry) {
      const auth = this.authOf(key);
      // A rejected load (unreadable file, bad JSON) is not kept: the next call tries again.
      auth.catch(() => this.byKey.delete(key));
      entry = { auth, authorize: () => this.headersFor(key) };
      if (this.byKey.size >= MAX_CREDENTIALS) this.byKey.clear();
      this.byKey.set(key, entry);
    }
    return entry;
  }

  private async authOf(key: string): Promise<GoogleAuth> {
    if (key !== '') return googleAuthFor(this.parse(key, 'the credential'));
    if (!this.credentialsFile) {
      const { GoogleAuth } = await googleAuthLibrary();
      return new GoogleAuth({ scopes: [CLOUD_PLATFORM_SCOPE] });
    }
    let text: string;
    try {
      text = await readFile(this.credentialsFile, 'utf8');
    } catch (err) {
      throw this.unusable(`the credentials file ${this.credentialsFile} cannot be read (${(err as Error).message})`, err);
    }
    return googleAuthFor(this.parse(text, `the credentials file ${this.credentialsFile}`));
  }

  private parse(text: string, what: string): CredentialJson & Record<string, unknown> {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw this.unusable(`${what} is not JSON`, err);
    }
    if (!json || typeof json !== 'object' || typeof (json as CredentialJson).type !== 'string') {
      throw this.unusable(`${what} is not a Google credential JSON (it has no "type")`, null);
    }
    return json as CredentialJson & Record<string, unknown>;
  }

  /**
   * A token request the token endpoint refused (an HTTP 4xx: a deleted or disabled key, a wrong
   * signature) is the credential refused, so a pool rests it; anything else (no ADC found, the
   * endpoint unreachable) is the gateway's configuration or network.
   */
  private tokenError(err: unknown): GatewayError {
    const status = (err as { response?: { status?: unknown } } | null)?.response?.status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      return upstreamErrorFor(this.provider, '', 401, { kind: 'credential', message: null, type: null, code: null });
    }
    return this.unusable((err as Error).message, err);
  }

  private unusable(why: string, cause: unknown): GatewayError {
    return upstreamError({
      status: 502,
      message: `Provider "${this.provider}" has no usable Google credentials (${why}). An operator must set credentialsJson or credentialsFile, or make Application Default Credentials find some.`,
      cause,
    });
  }
}

/** A `GoogleAuth` for one credential JSON, its token requests sent to the key's own `token_uri`. */
async function googleAuthFor(json: CredentialJson & Record<string, unknown>): Promise<GoogleAuth> {
  const { GoogleAuth, gaxios } = await googleAuthLibrary();
  const options: GoogleAuthOptions = { credentials: json as GoogleAuthOptions['credentials'], scopes: [CLOUD_PLATFORM_SCOPE] };
  const tokenUri = json.type === 'service_account' && typeof json.token_uri === 'string' ? json.token_uri : GOOGLE_TOKEN_URL;
  if (tokenUri !== GOOGLE_TOKEN_URL) {
    const transporter = new gaxios.Gaxios();
    transporter.interceptors.request.add({
      resolved: (config) => {
        if (String(config.url) === GOOGLE_TOKEN_URL) config.url = new URL(tokenUri);
        return Promise.resolve(config);
      },
    });
    options.clientOptions = { transporter };
  }
  return new GoogleAuth(options);
}
