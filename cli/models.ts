/**
 * `tollgate models sync|list`: discover each configured provider's models from its own list endpoint
 * (with the shared credential from the manifest / environment) and persist them, or show the
 * persisted catalog. A running gateway reads the persisted catalog at start and refreshes it itself.
 */
import { Command } from 'commander';
import { createUpstreamClient } from '../core/upstream.ts';
import type { ProviderRouterConfig } from '../plugins/provider-router/schema.ts';
import { createProviders } from '../plugins/provider-router/index.ts';
import { loadPersistedCatalog, persistCatalog } from '../plugins/provider-router/catalog-store.ts';
import { getModelDisplayName } from '../plugins/provider-router/model-display-name.ts';
import { loadManifest } from './manifest-source.ts';
import { addDataDirOption, withStore } from './context.ts';
import { CliError, printJson, printTable } from './output.ts';

interface ModelsOptions {
  config?: string;
  provider?: string;
  json?: boolean;
  dataDir?: string;
}

interface SyncResult {
  provider: string;
  models: number | null;
  error: string | null;
}

export function modelsCommand(): Command {
  const models = new Command('models').description('discover and list the models of the configured providers');

  addDataDirOption(models.command('sync').description("fetch every provider's model list now and store it"))
    .option('--config <path>', 'manifest (default: ./tollgate.json if present, else the built-in default)')
    .option('--provider <id>', 'only this provider')
    .option('--json', 'print JSON')
    .action(async (options: ModelsOptions) => {
      const { manifest } = loadManifest(options.config);
      const router = manifest.plugins.find((p) => p.name === 'provider-router');
      if (!router) throw new CliError('the manifest has no provider-router plugin');
      const upstream = createUpstreamClient(manifest.upstream);
      const providers = createProviders(router.config as unknown as ProviderRouterConfig, { upstream });
      if (options.provider && !providers.has(options.provider)) {
        throw new CliError(`no provider "${options.provider}" in the manifest (known: ${[...providers.keys()].join(', ')})`);
      }
      const results: SyncResult[] = [];
      try {
        await withStore(options, async (store) => {
          for (const [id, provider] of providers) {
            if (options.provider && id !== options.provider) continue;
            const credential = provider.sharedCredential();
            if (!credential) {
              results.push({ provider: id, models: null, error: 'no shared credential (set its API key in the environment or manifest)' });
              continue;
            }
            try {
              const list = await provider.listModels(credential);
              persistCatalog(store.sqlite, id, list);
              results.push({ provider: id, models: list.length, error: null });
            } catch (err) {
              results.push({ provider: id, models: null, error: (err as Error).message });
            }
          }
        });
      } finally {
        await upstream.close();
      }
      if (options.json) printJson(results);
      else printTable(results as unknown as Record<string, unknown>[], ['provider', 'models', 'error']);
      if (results.length > 0 && results.every((r) => r.error !== null)) process.exitCode = 1;
    });

  addDataDirOption(models.command('list').description('list the stored catalog'))
    .option('--provider <id>', 'only this provider')
    .option('--json', 'print JSON')
    .action(async (options: ModelsOptions) => {
      const lists = await withStore(options, (store) => loadPersistedCatalog(store.db));
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
