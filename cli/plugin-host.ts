/**
 * Boots one plugin of the manifest outside the gateway, for a command that needs a service it offers
 * (`tollgate models sync` uses the routing plugin's `providers`). The plugin is created by its own
 * factory through the registry, exactly as the gateway would create it, so the CLI never imports a
 * plugin's files; only that one plugin runs, and it serves no requests.
 *
 * Its context differs from the gateway's in two ways, both so a command costs no more than it uses:
 * the master key is read on first use (a sync that opens no stored credential never creates
 * `secret.key`), and there is no tokenizer (loading it takes most of a second; a plugin that counts
 * tokens outside a request is a bug, reported as such).
 */
import { loadKeyring, type KeyringSource } from '../core/store/data-dir.ts';
import type { Keyring } from '../core/accounts/secret-box.ts';
import type { Store } from '../core/store/store.ts';
import type { Manifest, PluginEntry, PluginRegistry } from '../core/manifest.ts';
import { localLeases } from '../core/coordination/leases.ts';
import type { PluginContext } from '../core/plugin.ts';
import type { TokenEstimator } from '../core/tokens/token-estimate.ts';
import { createServiceRegistry, type ServiceRegistry } from '../core/services.ts';
import { createUpstreamClient } from '../core/upstream/upstream-client.ts';
import { createLog } from '../core/runtime/log.ts';
import { systemClock } from '../core/runtime/clock.ts';
import { createMetricsRegistry } from '../core/runtime/metrics.ts';
import { createLocalRateCounters } from '../core/coordination/rate-counters.ts';
import { createDatabaseKv } from '../core/store/plugin-kv-database.ts';

/** What the host needs besides the plugin's manifest entry. */
export interface PluginHostOptions {
  registry: PluginRegistry;
  manifest: Manifest;
  store: Store;
  /** Absolute data directory (the master key's home). */
  dataDir: string;
}

function lazyKeyring(dataDir: string): KeyringSource {
  let keyring: Keyring | null = null;
  return {
    get: () => (keyring ??= loadKeyring(dataDir)),
    reload: () => (keyring = loadKeyring(dataDir)),
  };
}

const unavailable = (): never => {
  throw new Error('token counts are not available to a plugin booted by the CLI');
};
const noTokenizer: TokenEstimator = {
  ready: () => null, readyFor: () => null, promptTokensBound: unavailable, count: unavailable, promptTokens: unavailable, completionTokens: unavailable,
};

/**
 * Creates the plugin of manifest entry `entry`, runs `fn` with the services it provided, then closes
 * the plugin and its upstream pools (also when `fn` throws). Logs warnings and errors to stderr, so a
 * command's `--json` output stays clean.
 */
export async function withPlugin<T>(entry: PluginEntry, options: PluginHostOptions, fn: (services: ServiceRegistry) => Promise<T>): Promise<T> {
  const { manifest, store, dataDir } = options;
  const upstream = createUpstreamClient(manifest.upstream);
  const log = createLog('warn');
  // The database store even beside Redis: a command serves no requests and holds no coordination.
  const pluginKv = createDatabaseKv(store, { clock: systemClock, leases: localLeases, log });
  const ctx: PluginContext = {
    store, log, dataDir, upstream, keyring: lazyKeyring(dataDir), clock: systemClock,
    services: createServiceRegistry(), tokens: noTokenizer, metrics: createMetricsRegistry(),
    // It serves no requests, so it counts none: nothing to share with the replicas.
    rateCounters: createLocalRateCounters(systemClock),
    budgetCounters: null,
    leases: localLeases,
    pluginKv,
  };
  try {
    const plugin = await options.registry.get(entry.name)!.create(entry.config, ctx);
    try {
      return await fn(ctx.services);
    } finally {
      await plugin.close?.();
    }
  } finally {
    await pluginKv.close();
    await upstream.close();
  }
}
