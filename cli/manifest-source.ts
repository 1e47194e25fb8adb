/** Which manifest a command uses: `--config PATH`, else `./tollgate.json` if present, else the built-in default. */
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { readManifestFile, validateManifest, type Manifest, type PluginRegistry } from '../core/manifest.ts';
import { defaultManifest } from '../core/default-manifest.ts';
import { loadPluginModules } from '../core/sdk/load-modules.ts';
import { CliError } from './output.ts';

/** A validated manifest, where it came from, and the plugins it may name (the built-ins and the modules it loaded). */
export interface LoadedManifest {
  manifest: Manifest;
  source: string;
  registry: PluginRegistry;
}

/**
 * The manifest, its plugin modules loaded (relative to its folder; the working directory for the
 * built-in default) and validated against the built-ins plus them, defaults filled in. Throws
 * `ManifestError` with every problem.
 */
export async function loadManifest(configPath: string | undefined, builtIns: PluginRegistry): Promise<LoadedManifest> {
  if (configPath !== undefined && !existsSync(configPath)) throw new CliError(`no manifest at ${resolve(configPath)} (--config)`);
  const path = configPath ?? (existsSync('tollgate.json') ? 'tollgate.json' : undefined);
  const source = path ? resolve(path) : 'built-in default manifest';
  const input = path ? readManifestFile(source) : structuredClone(defaultManifest);
  const loaded = await loadPluginModules((input as { plugins?: unknown } | null)?.plugins, path ? dirname(source) : process.cwd(), builtIns);
  return { manifest: validateManifest(input, loaded.registry, { source, loaded }), source, registry: loaded.registry };
}
