/**
 * `tollgate models sync|list`: discover each configured provider's models from its own list endpoint
 * (with the shared credential from the manifest / environment) and persist them, or show the
 * persisted catalog. A running gateway reads the persisted catalog at start and refreshes it itself.
 *
 * `sync` boots the manifest's routing plugin through the registry (`plugin-host.ts`) and asks its
 * `providers` service to sync; `list` reads the persisted catalog directly.
 */
import { Command } from 'commander';
import { resolveDataDir } from '../core/store/data-dir.ts';
import type { PluginRegistry } from '../core/manifest.ts';
import { loadPersistedCatalog } from '../core/catalog/model-catalog-store.ts';
import { getModelDisplayName } from '../core/catalog/model-display-name.ts';
import type { CatalogSyncResult, ServiceRegistry } from '../core/services.ts';
import { loadManifest } from './manifest-source.ts';
import { addDataDirOption, withStore } from './context.ts';
import { withPlugin } from './plugin-host.ts';
import { CliError, printJson, printTable } from './output.ts';

interface ModelsOptions {
  config?: string;
  provider?: string;
  json?: boolean;
  dataDir?: string;
}

/** Syncs through the routing plugin's `providers` service; an unknown `--provider` is the user's error. */
async function syncWith(services: ServiceRegistry, routerName: string, providerId: string | undefined): Promise<CatalogSyncResult[]> {
  const providers = services.get('providers');
  if (!providers) throw new CliError(`the routing plugin "${routerName}" offers no providers service, so it has no models to sync`);
  const known = providers.list().map((p) => p.id);
  if (providerId !== undefined && !known.includes(providerId)) {
    throw new CliError(`no provider "${providerId}" in the manifest (known: ${known.join(', ')})`);
  }
  return providers.syncCatalog(providerId);
}

export function modelsCommand(registry: PluginRegistry): Command {
  const models = new Command('models').description('discover and list the models of the configured providers');

  addDataDirOption(models.command('sync').description("fetch every provider's model list now and store it"))
    .option('--config <path>', 'manifest (default: ./tollgate.json if present, else the built-in default)')
    .option('--provider <id>', 'only this provider')
    .option('--json', 'print JSON')
    .action(async (options: ModelsOptions) => {
      const { manifest } = await loadManifest(options.config, registry);
      const router = manifest.plugins.find((p) => registry.get(p.name)?.terminal);
      if (!router) throw new CliError('the manifest has no routing plugin');
      const host = { registry, manifest, dataDir: resolveDataDir(options.dataDir) };
      const results = await withStore(options, (store) =>
        withPlugin(router, { ...host, store }, (services) => syncWith(services, router.name, options.provider)));
      if (options.json) printJson(results);
      else printTable(results, ['provider', 'models', 'error']);
      if (results.length > 0 && results.every((r) => r.error !== null)) process.exitCode = 1;
    });

  addDataDirOption(models.command('list').description('list the stored catalog'))
    .option('--provider <id>', 'only this provider')
    .option('--json', 'print JSON')
    .action(async (options: ModelsOptions) => {
      const lists = await withStore(options, (store) => loadPersistedCatalog(store), 'reads');
      const rows = [...lists].flatMap(([provider, list]) =>
        options.provider && provider !== options.provider
          ? []
          : list.models.map((m) => ({
              id: `${provider}/${m.id}`, provider, display_name: getModelDisplayName(m), owned_by: m.owned_by,
              fetched_at: new Date(list.fetchedAtMs).toISOString(),
            })),
      );
      if (options.json) printJson(rows);
      else printTable(rows, ['id', 'display_name', 'owned_by', 'fetched_at']);
    });

  return models;
}
