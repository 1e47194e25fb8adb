/**
 * The model catalog: each provider's discovered model list, cached in memory with a TTL. A list that
 * was persisted by an earlier run (core `model-catalog-store.ts`) seeds the cache with its remaining
 * freshness, so a restart does not re-discover a fresh list, and a restart with the upstream down
 * still serves the old one. When a refresh fails the stale list is served (lru-cache `allowStaleOnFetchRejection`).
 * Several replicas refresh a list once between them (`CatalogOptions.shared`).
 * Providers that cannot be listed (down and never listed, no shared credential) contribute nothing.
 */
import { LRUCache } from 'lru-cache';
import type { Log } from '../../core/runtime/log.ts';
import type { CatalogEntry, Credential, Provider } from './providers/base.ts';
import type { PersistedList } from '../../core/catalog/model-catalog-store.ts';

export interface Catalog {
  /** Every provider's models (fetching lists not yet cached or expired). */
  all(): Promise<Array<{ provider: string; models: CatalogEntry[] }>>;
  /** One provider's models. */
  modelsOf(provider: string): Promise<CatalogEntry[]>;
  /** Provider ids whose catalog lists `modelId`. */
  providersOf(modelId: string): Promise<string[]>;
}

export interface CatalogOptions {
  ttlMs: number;
  log: Log;
  /** Lists persisted by an earlier run, by provider id. */
  persisted?: ReadonlyMap<string, PersistedList>;
  /** Called with each freshly discovered list (to persist it). */
  onDiscovered?: (provider: string, models: CatalogEntry[]) => void | Promise<void>;
  /**
   * Replicas share one refresh: before discovering a list, the latest persisted one is read (another
   * replica, or `tollgate models sync`, may have fetched it since), and only the replica holding the
   * provider's lease asks the upstream; the others serve what they have and look again soon.
   */
  shared?: {
    latest(provider: string): Promise<PersistedList | undefined>;
    lease(provider: string, ttlMs: number): Promise<boolean>;
  };
}

/** How soon a replica that found another refreshing a list looks for the result, ms. */
const SHARED_RECHECK_MS = 5_000;

export function createCatalog(providers: ReadonlyMap<string, Provider>, options: CatalogOptions): Catalog {
  const { ttlMs, log } = options;
  const cache = new LRUCache<string, CatalogEntry[]>({
    max: Math.max(1, providers.size),
    ttl: ttlMs,
    allowStale: false,
    allowStaleOnFetchRejection: true,
    noDeleteOnFetchRejection: true,
    fetchMethod: async (id, stale, { signal, options: entry }) => {
      const provider = providers.get(id)!;
      const credential = provider.sharedCredential();
      if (!credential) return [];
      if (options.shared) {
        const latest = await options.shared.latest(id);
        const ageMs = latest ? Date.now() - latest.fetchedAtMs : Infinity;
        if (latest && ageMs < ttlMs) {
          entry.ttl = ttlMs - ageMs;
          return latest.models;
        }
        const known = stale ?? latest?.models;
        if (known && !(await options.shared.lease(id, Math.min(ttlMs, 60_000)))) {
          entry.ttl = Math.min(ttlMs, SHARED_RECHECK_MS);
          return known;
        }
      }
      const models = await provider.listModels(credential, signal);
      try {
        await options.onDiscovered?.(id, models);
      } catch (err) {
        log.warn('could not persist the model catalog', { provider: id, err: (err as Error).message });
      }
      return models;
    },
  });
  for (const [id, list] of options.persisted ?? []) {
    if (!providers.has(id)) continue;
    // Remaining freshness; at least 1 ms so an old list is stale at once but still there to serve.
    cache.set(id, list.models, { ttl: Math.max(1, ttlMs - (Date.now() - list.fetchedAtMs)) });
  }

  // After a failed discovery, wait before asking that upstream again, so a down provider does not
  // add a connect timeout to every request.
  const retryAfterMs = Math.min(ttlMs, 30_000);
  const failedUntil = new Map<string, number>();

  function failed(id: string, err: unknown): void {
    failedUntil.set(id, Date.now() + retryAfterMs);
    log.warn('model discovery failed', { provider: id, err: (err as Error | undefined)?.message });
  }

  async function modelsOf(id: string): Promise<CatalogEntry[]> {
    if (!providers.has(id)) return [];
    if ((failedUntil.get(id) ?? 0) > Date.now()) return cache.get(id, { allowStale: true }) ?? [];
    const status: LRUCache.Status<string, CatalogEntry[]> = {};
    try {
      const models = await cache.fetch(id, { status });
      // A rejected refresh that served the stale list resolves rather than throws.
      if (status.fetchRejected) failed(id, status.fetchError);
      return models ?? [];
    } catch (err) {
      failed(id, err);
      return cache.get(id, { allowStale: true }) ?? [];
    }
  }

  return {
    async all() {
      const ids = [...providers.keys()];
      const lists = await Promise.all(ids.map(modelsOf));
      return ids.map((provider, i) => ({ provider, models: lists[i]! }));
    },
    modelsOf,
    async providersOf(modelId) {
      const lists = await this.all();
      return lists.filter((l) => l.models.some((m) => m.id === modelId)).map((l) => l.provider);
    },
  };
}

/**
 * Model lists fetched with a user's own credential, for providers the gateway has no shared key for
 * (so the shared catalog cannot list them). Cached per user and provider for `ttlMs`; not persisted.
 * A failed listing yields nothing and is retried after `ttlMs` at most 30 s.
 */
export interface UserCatalog {
  modelsOf(provider: Provider, gatewayUserId: number, credential: Credential): Promise<CatalogEntry[]>;
}

export function createUserCatalog(ttlMs: number, log: Log): UserCatalog {
  const cache = new LRUCache<string, CatalogEntry[]>({ max: 10_000, ttl: ttlMs });
  const pending = new Map<string, Promise<CatalogEntry[]>>();
  return {
    async modelsOf(provider, gatewayUserId, credential) {
      const key = `${gatewayUserId}\n${provider.id}`;
      const cached = cache.get(key);
      if (cached) return cached;
      let fetching = pending.get(key);
      if (!fetching) {
        fetching = provider.listModels(credential).then(
          (models) => {
            cache.set(key, models);
            return models;
          },
          (err: unknown) => {
            log.warn('model discovery with a user credential failed', { provider: provider.id, gatewayUserId, err: (err as Error).message });
            cache.set(key, [], { ttl: Math.min(ttlMs, 30_000) });
            return [];
          },
        ).finally(() => pending.delete(key));
        pending.set(key, fetching);
      }
      return fetching;
    },
  };
}
