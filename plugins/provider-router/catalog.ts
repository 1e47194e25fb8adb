/**
 * The model catalog: each provider's discovered model list, cached in memory with a TTL; when a
 * refresh fails the stale list is served (lru-cache `allowStaleOnFetchRejection`). Providers that
 * cannot be listed (down, no credential) contribute nothing.
 */
import { LRUCache } from 'lru-cache';
import type { Log } from '../../core/log.ts';
import type { CatalogEntry, ProviderService } from './providers/base.ts';

export interface Catalog {
  /** Every provider's models (fetching lists not yet cached or expired). */
  all(): Promise<Array<{ provider: string; models: CatalogEntry[] }>>;
  /** Provider ids whose catalog lists `modelId`. */
  providersOf(modelId: string): Promise<string[]>;
}

export function createCatalog(providers: ReadonlyMap<string, ProviderService>, ttlMs: number, log: Log): Catalog {
  const cache = new LRUCache<string, CatalogEntry[]>({
    max: Math.max(1, providers.size),
    ttl: ttlMs,
    allowStale: false,
    allowStaleOnFetchRejection: true,
    noDeleteOnFetchRejection: true,
    fetchMethod: async (id, _stale, { signal }) => {
      const provider = providers.get(id)!;
      const credential = provider.sharedCredential();
      if (!credential) return [];
      return provider.listModels(credential, signal);
    },
  });

  // After a failed discovery with nothing stale to serve, wait before asking that upstream again,
  // so a down provider does not add a connect timeout to every request.
  const retryAfterMs = Math.min(ttlMs, 30_000);
  const failedUntil = new Map<string, number>();

  async function modelsOf(id: string): Promise<CatalogEntry[]> {
    if ((failedUntil.get(id) ?? 0) > Date.now()) return cache.get(id, { allowStale: true }) ?? [];
    try {
      return (await cache.fetch(id)) ?? [];
    } catch (err) {
      failedUntil.set(id, Date.now() + retryAfterMs);
      log.warn('model discovery failed', { provider: id, err: (err as Error).message });
      return [];
    }
  }

  return {
    async all() {
      const ids = [...providers.keys()];
      const lists = await Promise.all(ids.map(modelsOf));
      return ids.map((provider, i) => ({ provider, models: lists[i]! }));
    },
    async providersOf(modelId) {
      const lists = await this.all();
      return lists.filter((l) => l.models.some((m) => m.id === modelId)).map((l) => l.provider);
    },
  };
}
