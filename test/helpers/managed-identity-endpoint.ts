/**
 * Azure App Service's managed-identity token endpoint on 127.0.0.1 (plain http, as App Service's own
 * local endpoint is), what a process in App Service or Functions reaches through the
 * `IDENTITY_ENDPOINT` and `IDENTITY_HEADER` environment variables
 * (https://learn.microsoft.com/azure/app-service/overview-managed-identity#rest-endpoint-reference):
 * `GET <endpoint>?api-version=2019-08-01&resource=<resource>[&client_id=<user-assigned id>]` with
 * the header `X-IDENTITY-HEADER: <IDENTITY_HEADER>` answers
 * `{ access_token, expires_on (Unix seconds, as text), resource, token_type: "Bearer", client_id }`.
 * A wrong header: 401; a user-assigned client id the host does not have: 400 as App Service says it.
 * Each issued token is unique and reported to `onIssue` (the Azure simulator accepts it as a Bearer).
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer } from './sim-http.ts';

/** The secret App Service puts in `IDENTITY_HEADER` for the process. */
export const IDENTITY_SIM_HEADER = 'sim-identity-header-0001';
/** The client id of the host's system-assigned identity, and of the one user-assigned identity it has. */
export const IDENTITY_SIM_CLIENTS = { system: '5a1e0000-0000-4000-8000-00000000005a', userAssigned: '0a5e0000-0000-4000-8000-0000000000a5' };

export interface IdentityTokenRequest {
  query: Record<string, string>;
  identityHeader: string | undefined;
}

export interface ManagedIdentityEndpoint {
  /** The value of `IDENTITY_ENDPOINT`. */
  readonly identityEndpoint: string;
  readonly tokenRequests: IdentityTokenRequest[];
  close(): Promise<void>;
}

export interface ManagedIdentityEndpointOptions {
  /** Called with each token issued, the resource it is for and the identity's client id. */
  onIssue(token: string, resource: string, clientId: string): void;
}

function sendJson(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

export async function startManagedIdentityEndpoint(options: ManagedIdentityEndpointOptions): Promise<ManagedIdentityEndpoint> {
  const tokenRequests: IdentityTokenRequest[] = [];
  let issued = 0;
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const query = Object.fromEntries(url.searchParams);
    const identityHeader = req.headers['x-identity-header'] as string | undefined;
    if (req.method !== 'GET' || url.pathname !== '/msi/token') return sendJson(res, 404, { statusCode: 404, message: 'Not found' });
    tokenRequests.push({ query, identityHeader });
    if (identityHeader !== IDENTITY_SIM_HEADER) return sendJson(res, 401, { statusCode: 401, message: 'Unauthorized' });
    if (query['api-version'] !== '2019-08-01' || !query.resource) return sendJson(res, 400, { statusCode: 400, message: 'Invalid request: api-version and resource are required.' });
    const clientId = query.client_id ?? IDENTITY_SIM_CLIENTS.system;
    if (clientId !== IDENTITY_SIM_CLIENTS.system && clientId !== IDENTITY_SIM_CLIENTS.userAssigned) {
      return sendJson(res, 400, { statusCode: 400, message: 'No Managed Identity found for specified ClientId/ResourceId/PrincipalId.' });
    }
    const accessToken = `eyJ0eXAiOiJKV1QiLCJhbGciOiJub25lIn0.msi-sim-${++issued}.`;
    options.onIssue(accessToken, query.resource, clientId);
    sendJson(res, 200, {
      access_token: accessToken, expires_on: String(Math.floor(Date.now() / 1000) + 86_399), resource: query.resource, token_type: 'Bearer', client_id: clientId,
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const identityEndpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/msi/token`;
  return { identityEndpoint, tokenRequests, close: () => closeServer(server) };
}
