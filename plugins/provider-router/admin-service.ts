/**
 * What the router offers the admin API (`ctx.services.get('providers')`): the configured providers,
 * a test of one user's own credential (the provider's model list, the cheapest authenticated call,
 * fetched by that provider's own `listModels`), and a way to drop cached credentials after an admin
 * wrote one.
 */
import { performance } from 'node:perf_hooks';
import { GatewayError, providerNotFound, resourceNotFound } from '../../core/errors.ts';
import type { ProviderService } from './providers/base.ts';
import type { CredentialResolver } from './user-credentials.ts';

/** The outcome of a credential test, as `POST /admin/api/users/:id/credentials/:provider/test` shows it. */
export interface CredentialTestResult {
  /** True when the provider listed its models with the credential. */
  ok: boolean;
  /** 200 on success; the gateway's status for the failure (the upstream's 4xx, 502, 504); null when nothing answered. */
  status: number | null;
  /** Time the listing took, ms. */
  latency_ms: number;
  /** How many models the provider listed; null on failure. */
  models: number | null;
  error: { message: string; type: string; code: string } | null;
}

export interface ProvidersService {
  /** Configured providers, in manifest order: id and human name. */
  list(): Array<{ id: string; name: string }>;
  /**
   * Lists the provider's models with this user's own credential (not the shared one) and reports.
   * Throws 404 `provider_not_found` for an unknown provider and 404 `credential_not_found` when the
   * user has no credential of their own for it.
   */
  testCredential(gatewayUserId: number, provider: string): Promise<CredentialTestResult>;
  /** Forgets cached credentials of a user (all users when omitted), after an admin write. */
  invalidateCredentials(gatewayUserId?: number): void;
}

declare module '../../core/services.ts' {
  interface GatewayServices {
    providers: ProvidersService;
  }
}

/** A credential test gives up after this long (a model list is small; a hung upstream is a failure). */
const TEST_TIMEOUT_MS = 15_000;

export function createProvidersService(providers: ReadonlyMap<string, ProviderService>, credentials: CredentialResolver): ProvidersService {
  return {
    list: () => [...providers.values()].map((p) => ({ id: p.id, name: p.name })),

    async testCredential(gatewayUserId, id) {
      const provider = providers.get(id);
      if (!provider) throw providerNotFound(id, [...providers.keys()]);
      // Read it fresh: the point of a test is the credential as stored now.
      credentials.invalidate(gatewayUserId);
      const credential = credentials.resolve(provider, gatewayUserId);
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
  };
}
