/** Which manifest a command uses: `--config PATH`, else `./tollgate.json` if present, else the built-in default. */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { loadManifestFile, validateManifest, type Manifest } from '../core/manifest.ts';
import { defaultManifest } from '../core/default-manifest.ts';
import { pluginRegistry } from '../plugins/index.ts';

export function loadManifest(configPath: string | undefined): { manifest: Manifest; source: string } {
  const path = configPath ?? (existsSync('tollgate.json') ? 'tollgate.json' : undefined);
  if (path) return { manifest: loadManifestFile(resolve(path), pluginRegistry), source: resolve(path) };
  return { manifest: validateManifest(defaultManifest, pluginRegistry, { source: 'built-in default manifest' }), source: 'built-in default manifest' };
}
