/**
 * Credential resolution per request (docs/contract.md "Providers and credentials"): the gateway user's own
 * credential for the provider, else the provider's shared one, else null (the router answers 400
 * `provider_not_configured`). A user's credentials are opened once and cached (misses too: most users
 * have none); the cache clears when another process commits (the CLI set or deleted one) and entries
 * expire after `ttlMs`, so an in-process change is seen within that time even without `invalidate()`.
 */
import { LRUCache } from 'lru-cache';
import type { Store } from '../../core/db.ts';
import type { KeyringSource } from '../../core/data-dir.ts';
import type { Log } from '../../core/log.ts';
import { createCredentialReader, type OpenedCredential } from '../../core/provider-credentials.ts';
import { SecretOpenError } from '../../core/secret-box.ts';
import type { Credential, ProviderService } from './providers/base.ts';

export interface CredentialResolver {
  /** The credential for `provider` on behalf of `gatewayUserId` (null = anonymous / shared only). */
  resolve(provider: ProviderService, gatewayUserId: number | null): Credential | null;
  /** Forgets cached credentials (all users, or one). */
  invalidate(gatewayUserId?: number): void;
  close(): void;
}

export function createCredentialResolver(store: Store, keyring: KeyringSource, log: Log, ttlMs = 30_000): CredentialResolver {
  const read = createCredentialReader(store.sqlite);
  const cache = new LRUCache<number, ReadonlyMap<string, OpenedCredential>>({ max: 10_000, ttl: ttlMs });
  const unsubscribe = store.onExternalChange(() => cache.clear());

  function open(gatewayUserId: number): ReadonlyMap<string, OpenedCredential> {
    try {
      return read(gatewayUserId, keyring.get());
    } catch (err) {
      if (!(err instanceof SecretOpenError)) throw err;
      // Sealed under a key this process has not loaded yet (a rotation ran elsewhere): reload once.
      try {
        return read(gatewayUserId, keyring.reload());
      } catch (retryErr) {
        if (!(retryErr instanceof SecretOpenError)) throw retryErr;
        log.error('a stored provider credential does not open; it is ignored', { gatewayUserId, err: retryErr.message });
        return new Map();
      }
    }
  }

  return {
    resolve(provider, gatewayUserId) {
      if (gatewayUserId !== null) {
        let own = cache.get(gatewayUserId);
        if (!own) cache.set(gatewayUserId, (own = open(gatewayUserId)));
        const credential = own.get(provider.id);
        if (credential) return { apiKey: credential.apiKey, baseUrl: credential.baseUrl ?? provider.baseUrl, source: 'user' };
      }
      return provider.sharedCredential();
    },
    invalidate(gatewayUserId) {
      if (gatewayUserId === undefined) cache.clear();
      else cache.delete(gatewayUserId);
    },
    close: unsubscribe,
  };
}
