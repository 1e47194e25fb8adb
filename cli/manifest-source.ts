/** Which manifest a command uses: `--config PATH`, else `./tollgate.json` if present, else the built-in default. */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadManifestFile, validateManifest, type Manifest, type PluginRegistry } from '../core/manifest.ts';
import { defaultManifest } from '../core/default-manifest.ts';
import { CliError } from './output.ts';

/** The manifest, validated against `registry` (defaults filled in), and where it came from. */
export function loadManifest(configPath: string | undefined, registry: PluginRegistry): { manifest: Manifest; source: string } {
  if (configPath !== undefined && !existsSync(configPath)) throw new CliError(`no manifest at ${resolve(configPath)} (--config)`);
  const path = configPath ?? (existsSync('tollgate.json') ? 'tollgate.json' : undefined);
  if (path) return { manifest: loadManifestFile(resolve(path), registry), source: resolve(path) };
  return { manifest: validateManifest(defaultManifest, registry, { source: 'built-in default manifest' }), source: 'built-in default manifest' };
}
