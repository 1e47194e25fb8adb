/**
 * Loads the plugins a manifest names by `"module"` (`docs/plugins.md` "Loading"): a file relative to
 * the manifest's folder (`./my-plugin.mjs`) or a package resolved from there
 * (`@acme/tollgate-plugin-x`, as Node's `import` would from a file in that folder). Each module's
 * default export must be a `definePlugin(...)` result of this SDK generation; it becomes a
 * `PluginFactory` hosted behind the isolation of `host.ts`. Every problem is reported as a manifest
 * issue at the entry's JSON pointer, all at once, like the manifest's own.
 *
 * `tollgate/plugin` inside those modules resolves to this gateway's own SDK (`plugin-resolve-hooks.mjs`).
 */
import { existsSync, readFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { dirname, isAbsolute, join, resolve as resolvePath } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Ajv } from 'ajv';
import { resolve as resolveSpecifier } from 'import-meta-resolve';
import { substituteEnv, type ManifestIssue, type PluginRegistry } from '../manifest.ts';
import type { PluginFactory } from '../plugin.ts';
import { hostPlugin, type SdkPluginFactory } from './host.ts';
import { PLUGIN_API_VERSION, PLUGIN_NAME } from './index.ts';
import type { DefinedPlugin } from './types.ts';

/** What loading a manifest's plugin modules gave. */
export interface LoadedPlugins {
  /** The built-in registry plus every plugin loaded. */
  registry: PluginRegistry;
  /** Problems, each at its entry's JSON pointer (`/plugins/3/module`). */
  issues: ManifestIssue[];
  /** Indexes of the entries whose module did not load: the manifest check skips them (their problem is reported). */
  failed: Set<number>;
}

let hooksRegistered = false;

/** Makes `tollgate/plugin` resolve to this gateway's SDK in every module loaded from now on (once). */
function registerSdkResolution(): void {
  if (hooksRegistered) return;
  hooksRegistered = true;
  // The bundle keeps the SDK's build beside it (dist/plugin.js); from source, it is ./index.ts.
  const built = new URL('./plugin.js', import.meta.url);
  const sdkUrl = existsSync(built) ? built.href : new URL('./index.ts', import.meta.url).href;
  // Node 22.15+ resolves in the loading thread (`registerHooks`); older Nodes run `register`'s hooks
  // on a loader thread of their own (a few MB more resident).
  const { registerHooks } = nodeModule as { registerHooks?: (hooks: { resolve: SyncResolve }) => unknown };
  if (registerHooks) {
    registerHooks({ resolve: (specifier, context, next) => (specifier === 'tollgate/plugin' ? { url: sdkUrl, shortCircuit: true } : next(specifier, context)) });
    return;
  }
  nodeModule.register(new URL('./plugin-resolve-hooks.mjs', import.meta.url), { data: { sdkUrl } });
}

/** `module.registerHooks`'s synchronous resolve hook (Node 22.15+), as far as it is used here. */
type SyncResolve = (specifier: string, context: unknown, next: (specifier: string, context: unknown) => unknown) => unknown;

/** The file URL `specifier` names, from the manifest's folder `baseDir`. Throws when nothing is there. */
function locate(specifier: string, baseDir: string): string {
  if (specifier.startsWith('./') || specifier.startsWith('../') || isAbsolute(specifier)) {
    const path = resolvePath(baseDir, specifier);
    if (!existsSync(path)) throw new Error(`no file at ${path}`);
    return pathToFileURL(path).href;
  }
  return resolveSpecifier(specifier, pathToFileURL(join(baseDir, 'tollgate.json')).href);
}

/** The `version` of the package.json nearest above `file`, or null. */
function packageVersionOf(file: string): string | null {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        const version = (JSON.parse(readFileSync(manifest, 'utf8')) as { version?: unknown }).version;
        return typeof version === 'string' ? version : null;
      } catch {
        return null;
      }
    }
    if (dirname(dir) === dir) return null;
  }
}

/** Why `value` (a module's default export) is not a plugin of this SDK, or null when it is one. */
function notAPlugin(value: unknown): string | null {
  const apiVersion = (value as { apiVersion?: unknown } | null)?.apiVersion;
  if (typeof value !== 'object' || value === null || apiVersion === undefined) {
    return 'its default export is not a plugin: write `export default definePlugin({ ... })` with definePlugin from "tollgate/plugin"';
  }
  if (apiVersion !== PLUGIN_API_VERSION) return `it was written for plugin API version ${String(apiVersion)}; this gateway runs version ${PLUGIN_API_VERSION}`;
  const { name, create, configSchema } = value as Partial<DefinedPlugin>;
  if (typeof name !== 'string' || !PLUGIN_NAME.test(name)) return `its name ${JSON.stringify(name)} is not a plugin name (lowercase letters, digits, -)`;
  if (typeof create !== 'function') return 'it has no create(config, ctx) function';
  if (typeof configSchema !== 'object' || configSchema === null) return 'it has no configSchema (a JSON Schema object)';
  return null;
}

/**
 * Imports every plugin module `entries` names (the manifest's `plugins`, env references already
 * replaced) and returns `builtIns` plus them. An entry without `name` gets its plugin's name (written
 * into `entries`, so the manifest check finds it). Never throws for a bad module: its problem is an issue.
 */
export async function loadPluginModules(entries: unknown, baseDir: string, builtIns: PluginRegistry): Promise<LoadedPlugins> {
  const issues: ManifestIssue[] = [];
  const failed = new Set<number>();
  const registry = new Map<string, PluginFactory>(builtIns);
  if (!Array.isArray(entries)) return { registry, issues, failed };
  for (const [i, entry] of entries.entries()) {
    const written = (entry as { module?: unknown } | null)?.module;
    if (typeof written !== 'string') continue;
    const specifier = substituteEnv(written, process.env, []) as string;
    const at = `/plugins/${i}/module`;
    const problem = (message: string) => {
      issues.push({ pointer: at, message: `${JSON.stringify(specifier)}: ${message}` });
      failed.add(i);
    };
    let url: string;
    try {
      url = locate(specifier, baseDir);
    } catch (err) {
      problem(`cannot find it from ${baseDir} (${(err as Error).message})`);
      continue;
    }
    registerSdkResolution();
    let exported: unknown;
    try {
      exported = ((await import(url)) as { default?: unknown }).default;
    } catch (err) {
      problem(`failed to load: ${(err as Error)?.message ?? String(err)}`);
      continue;
    }
    const why = notAPlugin(exported);
    if (why) {
      problem(why);
      continue;
    }
    const definition = exported as DefinedPlugin<never, unknown>;
    const named = (entry as { name?: unknown }).name;
    if (named !== undefined && named !== definition.name) {
      issues.push({ pointer: `/plugins/${i}/name`, message: `the module's plugin is named "${definition.name}", not "${String(named)}" (leave "name" out, or write its name)` });
      failed.add(i);
      continue;
    }
    if (builtIns.has(definition.name)) {
      problem(`its name "${definition.name}" is a built-in plugin's: rename it`);
      continue;
    }
    const other = registry.get(definition.name) as SdkPluginFactory | undefined;
    if (other && other.sdk.origin.path !== fileURLToPath(url)) {
      problem(`its name "${definition.name}" is also the name of the plugin in ${other.sdk.origin.path}`);
      continue;
    }
    const schemaProblem = invalidSchema(definition.configSchema);
    if (schemaProblem) {
      problem(`its configSchema is not a valid JSON Schema (${schemaProblem}): a bug of the plugin`);
      continue;
    }
    const path = fileURLToPath(url);
    const version = definition.version ?? packageVersionOf(path);
    registry.set(definition.name, hostPlugin(version === definition.version ? definition : { ...definition, version: version ?? undefined }, { kind: 'module', specifier, path }));
    (entry as { name?: string }).name = definition.name;
  }
  return { registry, issues, failed };
}

/** Why Ajv cannot compile `schema`, or null. */
function invalidSchema(schema: unknown): string | null {
  try {
    new Ajv({ strict: false }).compile(schema as object);
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}
