/**
 * Microsoft Entra ID tokens for Azure OpenAI: `Authorization: Bearer <token>` of scope
 * `https://cognitiveservices.azure.com/.default`, added at dispatch (`UpstreamRequest.authorize`)
 * because getting a token may take a round trip to the tenant's token endpoint.
 *
 * The token source, from the manifest's `entra` (through `@azure/identity`):
 * - `tenantId`, `clientId` and `clientSecret`: `ClientSecretCredential` (an app registration's
 *   secret), at `authorityHost` when given (a sovereign cloud; default `https://login.microsoftonline.com`);
 * - `managedIdentity: true`: `ManagedIdentityCredential`, the host's system-assigned identity or the
 *   user-assigned one of `clientId`, from whatever endpoint the platform provides (App Service's
 *   `IDENTITY_ENDPOINT` + `IDENTITY_HEADER`, Arc, Cloud Shell, Service Fabric, else the instance
 *   metadata service), and nothing else (`DefaultAzureCredential` would also try the environment's
 *   keys and the CLI login);
 * - `clientId` alone: `ManagedIdentityCredential` of that user-assigned identity;
 * - neither: `DefaultAzureCredential` (environment `AZURE_CLIENT_ID`/`AZURE_TENANT_ID`/…, workload
 *   identity on AKS, the system-assigned managed identity, the Azure CLI's login).
 * One token is kept per provider and reused by every call until five minutes before it expires
 * (or the credential's own `refreshAfterTimestamp`); one fetch at a time, which concurrent calls share.
 *
 * Sources: https://learn.microsoft.com/azure/ai-foundry/openai/how-to/managed-identity (the scope);
 * https://learn.microsoft.com/javascript/api/@azure/identity/ (`ClientSecretCredential`,
 * `ManagedIdentityCredential`, `DefaultAzureCredential`, `AccessToken`).
 */
import type { AccessToken, TokenCredential } from '@azure/identity';
import { upstreamError } from '../../../../core/errors.ts';
import type { UpstreamRequest } from '../../../../core/upstream/upstream-call.ts';

/** The scope of every Azure OpenAI / Foundry data-plane call. */
export const COGNITIVE_SERVICES_SCOPE = 'https://cognitiveservices.azure.com/.default';
/** A token this close to its expiry is not used again, in ms. */
const REFRESH_BEFORE_EXPIRY_MS = 5 * 60_000;

/** The manifest's `entra` of an Azure provider. */
export interface EntraSettings {
  /** The directory (tenant) id of the app registration. */
  tenantId?: string;
  /** The app registration's (or a user-assigned managed identity's) client id. */
  clientId?: string;
  /** The app registration's client secret; with tenantId and clientId, a `ClientSecretCredential`. */
  clientSecret?: string;
  /** The Entra authority host, e.g. `https://login.microsoftonline.us`; must be https. */
  authorityHost?: string;
  /** True: the host's managed identity only (system-assigned, or the user-assigned one of `clientId`). */
  managedIdentity?: boolean;
}

/**
 * The `@azure/identity` credential `settings` describe (module doc). The library is imported at the
 * first token rather than at start-up: loading it costs every gateway and CLI process ~0.3 s of CPU,
 * and most never call Azure with Entra ID.
 */
async function credentialOf(settings: EntraSettings): Promise<TokenCredential> {
  const { ClientSecretCredential, DefaultAzureCredential, ManagedIdentityCredential } = await import('@azure/identity');
  const { tenantId, clientId, clientSecret, authorityHost, managedIdentity } = settings;
  if (managedIdentity) return clientId ? new ManagedIdentityCredential({ clientId }) : new ManagedIdentityCredential();
  if (tenantId && clientId && clientSecret) {
    // Instance discovery asks login.microsoftonline.com whether the authority is known; an operator's
    // authorityHost is trusted as configured (sovereign clouds, a private endpoint).
    return new ClientSecretCredential(tenantId, clientId, clientSecret, authorityHost ? { authorityHost, disableInstanceDiscovery: true } : {});
  }
  if (clientId) return new ManagedIdentityCredential({ clientId });
  return new DefaultAzureCredential(authorityHost ? { authorityHost } : {});
}

/** Entra tokens of one provider (module doc). */
export class EntraTokens {
  private credential: Promise<TokenCredential> | null = null;
  private token: AccessToken | null = null;
  private pending: Promise<AccessToken> | null = null;
  /** The `authorize` of calls carrying the provider's Entra identity. */
  readonly authorize: (request: UpstreamRequest) => Promise<Record<string, string>>;

  constructor(private readonly provider: string, private readonly settings: EntraSettings) {
    this.authorize = () => this.headers();
  }

  /** `{ authorization: 'Bearer …' }`; rejects with a 502 `GatewayError` when no token can be had. */
  async headers(): Promise<Record<string, string>> {
    const token = this.usable(Date.now()) ?? (await (this.pending ??= this.fetch()));
    return { authorization: `Bearer ${token.token}` };
  }

  private usable(nowMs: number): AccessToken | null {
    const token = this.token;
    if (!token) return null;
    const refreshAtMs = Math.min(token.refreshAfterTimestamp ?? Infinity, token.expiresOnTimestamp - REFRESH_BEFORE_EXPIRY_MS);
    return nowMs < refreshAtMs ? token : null;
  }

  private async fetch(): Promise<AccessToken> {
    try {
      const credential = await (this.credential ??= credentialOf(this.settings));
      const token = await credential.getToken(COGNITIVE_SERVICES_SCOPE);
      if (!token) throw new Error('the credential returned no token');
      this.token = token;
      return token;
    } catch (err) {
      throw upstreamError({
        status: 502,
        message: `Provider "${this.provider}" got no Microsoft Entra ID token (${(err as Error).message}). An operator must fix its "entra" settings (tenant, client id, secret) or the identity it runs as.`,
        cause: err,
      });
    } finally {
      this.pending = null;
    }
  }
}
