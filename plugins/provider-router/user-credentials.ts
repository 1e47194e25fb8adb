/**
 * Credential resolution per request (docs/contract.md "Providers and credentials"): the gateway user's own
 * credential for the provider, else the provider's shared one, else null (the router answers 400
 * `provider_not_configured`). A user's credentials are opened once and cached (misses too: most users
 * have none); the cache clears when another process commits (the CLI set or deleted one) and entries
 * expire after `ttlMs`, so an in-process change is seen within that time even without `invalidate()`.
 * A cache hit (and a miss on SQLite) answers synchronously; a miss on PostgreSQL returns a Promise.
 */
import { LRUCache } from 'lru-cache';
import type { Store } from '../../core/store/store.ts';
import type { KeyringSource } from '../../core/store/data-dir.ts';
import type { Log } from '../../core/runtime/log.ts';
import { createCredentialReader, type OpenedCredential } from '../../core/accounts/provider-credentials.ts';
import { SecretOpenError } from '../../core/accounts/secret-box.ts';
import type { Credential, Provider } from './providers/base.ts';

export interface CredentialResolver {
  /** The credential for `provider` on behalf of `gatewayUserId` (null = anonymous / shared only). */
  resolve(provider: Provider, gatewayUserId: number | null): Credential | null | Promise<Credential | null>;
  /** Forgets cached credentials (all users, or one). */
  invalidate(gatewayUserId?: number): void;
  close(): void;
}

type Opened = ReadonlyMap<string, OpenedCredential>;

export function createCredentialResolver(store: Store, keyring: KeyringSource, log: Log, ttlMs = 30_000): CredentialResolver {
  const read = createCredentialReader(store);
  const cache = new LRUCache<number, Opened>({ max: 10_000, ttl: ttlMs });
  // A read that started before a change must not cache what it read: it may be the old rows.
  let generation = 0;
  const clear = () => {
    generation++;
    cache.clear();
  };
  const unsubscribe = store.onExternalChange(clear);

  const unopenable = (gatewayUserId: number, err: unknown): Opened => {
    if (!(err instanceof SecretOpenError)) throw err;
    log.error('a stored provider credential does not open; it is ignored', { gatewayUserId, err: err.message });
    return new Map();
  };

  /** Opens with the loaded keyring; a record sealed under a key this process has not loaded yet (a rotation ran elsewhere) reloads it once. */
  function open(gatewayUserId: number): Opened | Promise<Opened> {
    const retry = (err: unknown): Opened | Promise<Opened> => {
      if (!(err instanceof SecretOpenError)) throw err;
      try {
        const again = read(gatewayUserId, keyring.reload());
        return again instanceof Promise ? again.catch((retryErr: unknown) => unopenable(gatewayUserId, retryErr)) : again;
      } catch (retryErr) {
        return unopenable(gatewayUserId, retryErr);
      }
    };
    try {
      const first = read(gatewayUserId, keyring.get());
      return first instanceof Promise ? first.catch(retry) : first;
    } catch (err) {
      return retry(err);
    }
  }

  function pick(provider: Provider, own: Opened): Credential | null {
    const credential = own.get(provider.id);
    if (credential) return { apiKey: credential.apiKey, baseUrl: credential.baseUrl ?? provider.baseUrl, source: 'user' };
    return provider.sharedCredential();
  }

  return {
    resolve(provider, gatewayUserId) {
      if (gatewayUserId === null) return provider.sharedCredential();
      const cached = cache.get(gatewayUserId);
      if (cached) return pick(provider, cached);
      const startedAt = generation;
      const opened = open(gatewayUserId);
      if (!(opened instanceof Promise)) {
        cache.set(gatewayUserId, opened);
        return pick(provider, opened);
      }
      return opened.then((own) => {
        if (startedAt === generation) cache.set(gatewayUserId, own);
        return pick(provider, own);
      });
    },
    invalidate(gatewayUserId) {
      if (gatewayUserId === undefined) clear();
      else {
        generation++;
        cache.delete(gatewayUserId);
      }
    },
    close: unsubscribe,
  };
}
