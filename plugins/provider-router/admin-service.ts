/**
 * The router's `providers` service (`ProvidersService`, core `services.ts`) for the admin API and the
 * CLI: the configured providers, a test of one user's own credential (the provider's model list, the
 * cheapest authenticated call, fetched by that provider's own `listModels`), a way to drop cached
 * credentials after an admin wrote one, and a catalog sync with the shared credentials
 * (`tollgate models sync`).
 */
import { performance } from 'node:perf_hooks';
import { GatewayError, providerNotFound, resourceNotFound } from '../../core/errors.ts';
import type { CatalogSyncResult, ProviderSummary, ProvidersService } from '../../core/services.ts';
import type { CatalogEntry, Provider } from './providers/base.ts';
import type { CredentialResolver } from './user-credentials.ts';

/** Stores a provider's freshly listed models (the persisted catalog). */
export type PersistModels = (provider: string, models: CatalogEntry[]) => Promise<void>;

/** A credential test gives up after this long (a model list is small; a hung upstream is a failure). */
const TEST_TIMEOUT_MS = 15_000;

/** Lists one provider's models with its shared credential and stores them; failures become the result. */
async function syncOne(provider: Provider, persist: PersistModels): Promise<CatalogSyncResult> {
  const credential = provider.sharedCredential();
  if (!credential) {
    return { provider: provider.id, models: null, error: 'no shared credential (set its API key in the environment or manifest)' };
  }
  try {
    const models = await provider.listModels(credential);
    await persist(provider.id, models);
    return { provider: provider.id, models: models.length, error: null };
  } catch (err) {
    return { provider: provider.id, models: null, error: (err as Error).message };
  }
}

/** Whether requests without a user's own credential can use `provider` (`ProviderSummary.sharedKey`). */
function sharedKeyOf(provider: Provider): ProviderSummary['sharedKey'] {
  const shared = provider.sharedCredential();
  if (!shared) return 'missing';
  return shared.apiKey ? 'configured' : 'not_needed';
}

export function createProvidersService(
  providers: ReadonlyMap<string, Provider>, credentials: CredentialResolver, persist: PersistModels,
): Omit<ProvidersService, 'allowedModels'> {
  return {
    list: () => [...providers.values()].map((p) => ({ id: p.id, name: p.name, sharedKey: sharedKeyOf(p) })),

    async testCredential(gatewayUserId, id) {
      const provider = providers.get(id);
      if (!provider) throw providerNotFound(id, [...providers.keys()]);
      // Read it fresh: the point of a test is the credential as stored now.
      credentials.invalidate(gatewayUserId);
      const credential = await credentials.resolve(provider, gatewayUserId);
      if (credential?.source !== 'user') {
        throw resourceNotFound('credential_not_found', `This user has no credential of their own for provider "${id}".`);
      }
      const startedMs = performance.now();
      const elapsed = () => Math.round(performance.now() - startedMs);
      try {
        const models = await provider.listModels(credential, AbortSignal.timeout(TEST_TIMEOUT_MS));
        return { ok: true, status: 200, latency_ms: elapsed(), models: models.length, error: null };
      } catch (err) {
        if (err instanceof GatewayError) {
          return { ok: false, status: err.status, latency_ms: elapsed(), models: null, error: { message: err.message, type: err.type, code: err.code } };
        }
        const error = { message: `The model list request failed: ${(err as Error).message}`, type: 'upstream_error', code: 'upstream_error' };
        return { ok: false, status: null, latency_ms: elapsed(), models: null, error };
      }
    },

    invalidateCredentials: (gatewayUserId) => credentials.invalidate(gatewayUserId),

    async syncCatalog(providerId) {
      if (providerId !== undefined && !providers.has(providerId)) throw providerNotFound(providerId, [...providers.keys()]);
      const results: CatalogSyncResult[] = [];
      for (const provider of providers.values()) {
        if (providerId === undefined || provider.id === providerId) results.push(await syncOne(provider, persist));
      }
      return results;
    },
  };
}
