/**
 * A Microsoft Entra ID (v2.0) token endpoint on 127.0.0.1, enough for `@azure/identity`'s
 * `ClientSecretCredential` with `authorityHost` pointing here and `disableInstanceDiscovery: true`
 * (https://learn.microsoft.com/entra/identity-platform/v2-oauth2-client-creds-grant-flow):
 * - `GET /{tenant}/v2.0/.well-known/openid-configuration`: the tenant's OpenID metadata, naming the
 *   token endpoint below (MSAL reads it before its first token request);
 * - `POST /{tenant}/oauth2/v2.0/token` (form: `grant_type=client_credentials`, `client_id`,
 *   `client_secret`, `scope`): `{ token_type: "Bearer", expires_in, access_token }`, or 401
 *   `invalid_client` (AADSTS7000215) for a wrong secret, 400 `unauthorized_client` for an unknown
 *   client or tenant.
 * Each issued token is unique and reported to `onIssue` (the Azure simulator accepts it as a Bearer).
 * Served over https (`tls`), as `@azure/identity` refuses an http authority host.
 */
import { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { closeServer } from './sim-http.ts';

export const ENTRA_SIM_TENANT = '72f988bf-0000-4000-8000-00000000e17a';
export const ENTRA_SIM_CLIENT = { clientId: '0d1e5a1e-0000-4000-8000-0000000c11e7', clientSecret: 'sim~entra~secret~0001' };

export interface TokenRequest {
  tenant: string;
  form: Record<string, string>;
}

export interface EntraTokenEndpoint {
  /** The authority host, as `authorityHost` (`https://login.microsoftonline.com` in production). */
  readonly authorityHost: string;
  /** Token requests received (metadata requests are not counted). */
  readonly tokenRequests: TokenRequest[];
  close(): Promise<void>;
}

export interface EntraTokenEndpointOptions {
  /** Called with each token issued and the scope it was asked for. */
  onIssue(token: string, scope: string): void;
  /** Seconds each token lives (default 3599, as Entra answers). */
  expiresInSec?: number;
  /** The server's key and certificate (`self-signed-cert.ts`). */
  tls: { key: string; cert: string };
}

function sendJson(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

function oauthError(res: ServerResponse, status: number, error: string, description: string) {
  sendJson(res, status, { error, error_description: description, error_codes: [Number(/AADSTS(\d+)/.exec(description)?.[1] ?? 0)], timestamp: new Date().toISOString() });
}

export async function startEntraTokenEndpoint(options: EntraTokenEndpointOptions): Promise<EntraTokenEndpoint> {
  const tokenRequests: TokenRequest[] = [];
  let issued = 0;
  let origin = '';
  const server: Server = createServer(options.tls, (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = (req.url ?? '/').split('?')[0]!;
      const metadata = /^\/([^/]+)\/v2\.0\/\.well-known\/openid-configuration$/.exec(path);
      if (req.method === 'GET' && metadata) {
        const tenant = metadata[1]!;
        return sendJson(res, 200, {
          token_endpoint: `${origin}/${tenant}/oauth2/v2.0/token`,
          authorization_endpoint: `${origin}/${tenant}/oauth2/v2.0/authorize`,
          end_session_endpoint: `${origin}/${tenant}/oauth2/v2.0/logout`,
          issuer: `${origin}/${tenant}/v2.0`,
          jwks_uri: `${origin}/${tenant}/discovery/v2.0/keys`,
          response_types_supported: ['code', 'id_token', 'code id_token', 'id_token token'],
          token_endpoint_auth_methods_supported: ['client_secret_post', 'private_key_jwt', 'client_secret_basic'],
        });
      }
      const token = /^\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(path);
      if (req.method !== 'POST' || !token) return oauthError(res, 404, 'invalid_request', 'AADSTS90002: not found');
      const form = Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8')));
      tokenRequests.push({ tenant: token[1]!, form });
      if (token[1] !== ENTRA_SIM_TENANT || form.client_id !== ENTRA_SIM_CLIENT.clientId) {
        return oauthError(res, 400, 'unauthorized_client', `AADSTS700016: Application with identifier '${form.client_id}' was not found in the directory '${token[1]}'.`);
      }
      if (form.grant_type !== 'client_credentials' || form.client_secret !== ENTRA_SIM_CLIENT.clientSecret) {
        return oauthError(res, 401, 'invalid_client', 'AADSTS7000215: Invalid client secret provided.');
      }
      const accessToken = `eyJ0eXAiOiJKV1QiLCJhbGciOiJub25lIn0.entra-sim-${++issued}.`;
      options.onIssue(accessToken, form.scope ?? '');
      const expiresIn = options.expiresInSec ?? 3599;
      sendJson(res, 200, { token_type: 'Bearer', expires_in: expiresIn, ext_expires_in: expiresIn, access_token: accessToken });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { authorityHost: origin, tokenRequests, close: () => closeServer(server) };
}
