/**
 * `tollgate plugins list`: every plugin the manifest may name (the gateway's built-ins and the modules
 * the manifest loads, `docs/plugins.md`), where each comes from, its version, and its position in the
 * manifest's chain when it is listed there. Loading the manifest loads its plugin modules, so a module
 * that fails to load fails here as in `tollgate check`.
 */
import { Command } from 'commander';
import type { PluginRegistry } from '../core/manifest.ts';
import { isSdkPlugin } from '../core/sdk/host.ts';
import { addDataDirOption } from './context.ts';
import { loadManifest } from './manifest-source.ts';
import { printJson, printTable } from './output.ts';

/** One line of the list. */
export interface PluginListing {
  name: string;
  /** `built-in`, or the module as the manifest names it (`./x.mjs`, `@acme/tollgate-plugin-x`). */
  source: string;
  /** The file a module was loaded from (absolute); null for a built-in. */
  path: string | null;
  /** The plugin's version: the gateway's for a built-in, the plugin's own (or its package's) for a module; null when it has none. */
  version: string | null;
  /** Written on the public plugin SDK (`tollgate/plugin`). */
  sdk: boolean;
  /** 1-based position in the manifest's chain; null when the manifest does not list it. */
  position: number | null;
  description: string;
}

export function pluginsCommand(builtIns: PluginRegistry, gatewayVersion: string): Command {
  const plugins = new Command('plugins').description('the plugins a manifest may name: built-in and loaded by "module"');
  addDataDirOption(plugins.command('list').description('list built-in and loaded plugins with their source, version and place in the manifest'))
    .option('--config <path>', 'manifest (default: ./tollgate.json if present, else the built-in default)')
    .option('--json', 'print JSON')
    .action(async (options: { config?: string; json?: boolean }) => {
      const { manifest, registry } = await loadManifest(options.config, builtIns);
      const positions = new Map(manifest.plugins.map((entry, i) => [entry.name, i + 1]));
      const rows: PluginListing[] = [...registry.values()].map((factory) => {
        const sdk = isSdkPlugin(factory) ? factory.sdk : null;
        const module = sdk?.origin.kind === 'module';
        return {
          name: factory.name,
          source: module ? sdk.origin.specifier! : 'built-in',
          path: module ? sdk.origin.path : null,
          version: module ? sdk.version : (sdk?.version ?? gatewayVersion),
          sdk: sdk !== null,
          position: positions.get(factory.name) ?? null,
          description: factory.description,
        };
      });
      rows.sort((a, b) => (a.position ?? Infinity) - (b.position ?? Infinity) || a.name.localeCompare(b.name));
      if (options.json) printJson(rows);
      else printTable(rows.map((r) => ({ ...r, position: r.position ?? '-' })), ['position', 'name', 'source', 'version', 'description']);
    });
  return plugins;
}
