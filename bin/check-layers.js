#!/usr/bin/env node
// Checks who imports whom (the architecture's "Layers" rule). Run by .ci/run before the tests;
// `node bin/check-layers.js [root]` checks another tree (the tests plant violations in one).
//
//   core/      imports neither a plugin, nor the CLI, nor the composition root (tollgate.ts);
//   cli/       imports no plugin and not the composition root: it is handed the plugin registry;
//   plugins/X/ imports core/ and its own folder only: no other plugin (plugins talk through the
//              services declared in core/services.ts), not the registry, not the CLI; the plugins
//              built on the public SDK (SDK_PLUGINS) import only its entry, core/sdk/index.ts.
// The registry (plugins/index.ts) and the composition root may import any plugin.
//
// Inside core/, the rooms (docs/architecture.md "Rooms of core"; ROOM_RULES below, each with its
// reason) keep the request path, the domain code and the base apart, and no import cycle exists: a
// cycle is allowed only between the contract files (CONTRACTS), through `import type` alone, since
// their types name each other (an exchange has a dialect, a dialect renders an exchange).
//
// Imports are read with TypeScript's own pre-processor (already a dev dependency, used by
// `tsc --noEmit`), so static, type-only, re-exports, dynamic `import()` and `declare module`
// augmentations all count, and nothing in a comment or a string does.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const SOURCE_FILE = /\.(?:ts|mts|cts|js|mjs|cjs)$/;
const CHECKED_DIRS = ['core', 'cli', 'plugins'];
const COMPOSITION_ROOT = 'tollgate.ts';

/** The contracts a plugin author reads: they import types only, and may name each other's types. */
const CONTRACTS = new Set([
  'core/exchange.ts', 'core/plugin.ts', 'core/services.ts', 'core/routes.ts', 'core/errors.ts', 'core/json-schema.ts',
  'core/dialects/dialect.ts', 'core/upstream/upstream-call.ts',
  // Pure (no imports): which engine errors mean "unavailable now", which the error catalog maps to 503.
  'core/store/store-errors.ts',
]);

/**
 * First-party plugins built on the public plugin SDK alone (docs/plugins.md): they import
 * `core/sdk/index.ts` (what operators import as `tollgate/plugin`) and their own folder, nothing else
 * of the gateway, which proves the SDK suffices for them.
 */
const SDK_PLUGINS = new Set(['cache', 'guardrails']);
const SDK_ENTRY = 'core/sdk/index.ts';

/** The spine at core/'s root: the request path's entry, which rooms below it never import. */
const SPINE = new Set(['core/gateway.ts', 'core/server.ts', 'core/pipeline.ts']);
const REQUEST_PATH_ROOMS = new Set(['http', 'proxy', 'upstream', 'dialects']);
const DOMAIN_ROOMS = new Set(['accounts', 'money', 'catalog', 'store', 'request-log', 'coordination', 'reconcile', 'audit']);

/** The room of a core/ path (its first folder), '' at core/'s root, null outside core/. */
function roomOf(path) {
  const parts = path.split('/');
  if (parts[0] !== 'core') return null;
  return parts.length === 2 ? '' : parts[1];
}

/**
 * Why a file of core/ may not import `to` (both repo-relative; `typeOnly`: an `import type`), or null.
 * Type-only imports of the contracts are always allowed: they carry no machinery.
 */
export function roomRuleBroken(from, to, typeOnly) {
  const a = roomOf(from);
  const b = roomOf(to);
  if (a === null || b === null || a === b) return null;
  if (typeOnly && CONTRACTS.has(to)) return null;
  if (CONTRACTS.has(from) && !typeOnly && !CONTRACTS.has(to) && b !== 'canonical') {
    return 'a contract imports no machinery (types only, or another contract)';
  }
  // The self-service portal (core/portal/) is the admin API's sibling: it reuses its router pieces,
  // log queries, origin check and static files rather than copying them; nothing else imports admin/.
  if (b === 'admin' && from !== 'core/gateway.ts' && a !== 'portal') return 'the admin API is a leaf: only core/gateway.ts (and its sibling, the portal) use it';
  if (a === 'runtime') return 'runtime/ is the base every room stands on (clock, log, metrics): it imports nothing else of core/';
  if (a === 'canonical' && to !== 'core/errors.ts') return 'canonical/ holds the shapes every room shares: it imports only the error catalog';
  if (DOMAIN_ROOMS.has(a) && (REQUEST_PATH_ROOMS.has(b) || SPINE.has(to) || b === 'openapi' || b === 'tokens')) {
    return `${a}/ is domain code the CLI, the admin API and plugins share: it does not pull in the request path (${b || to})`;
  }
  if (a === 'tokens' && (REQUEST_PATH_ROOMS.has(b) || SPINE.has(to))) return 'tokens/ counts canonical shapes: it knows no HTTP, relay, upstream or dialect';
  if (a === 'telemetry' && (b === 'proxy' || b === 'http' || b === 'upstream' || SPINE.has(to))) {
    return 'telemetry/ reads the exchange the request path hands it: it imports no relay, HTTP or upstream machinery (the proxy calls it, not the other way round)';
  }
  if (a === 'upstream' && (b === 'proxy' || b === 'dialects' || SPINE.has(to))) return 'upstream/ is the call contract and its client: it knows no relay and no client dialect';
  if (a === 'dialects' && b === 'proxy' && to !== 'core/proxy/sse.ts') return 'a dialect translates shapes; the relay calls it, not the other way round (only the SSE framing is shared)';
  if (a !== '' && SPINE.has(to)) return `the spine (${to}) is the top of core/: no room imports it`;
  return null;
}

/** A repo-relative path with `/` separators. */
function toPosix(path) {
  return path.split(sep).join('/');
}

/** Which part of the tree a repo-relative path is in. */
function partOf(path) {
  if (path === COMPOSITION_ROOT) return { layer: 'root' };
  const [top, second, third] = path.split('/');
  if (top === 'core' || top === 'cli') return { layer: top };
  if (top === 'plugins') return third === undefined ? { layer: 'registry' } : { layer: 'plugin', plugin: second };
  return { layer: 'other' };
}

/** Why `from` may not import `to` (both repo-relative), or null when it may. */
export function ruleBroken(from, to) {
  const source = partOf(from);
  const target = partOf(to);
  const forbiddenEverywhere = target.layer === 'root' ? 'nothing imports the composition root (tollgate.ts)' : null;
  switch (source.layer) {
    case 'core':
      if (target.layer === 'plugin' || target.layer === 'registry') return 'core/ knows no plugin';
      if (target.layer === 'cli') return 'core/ does not import the CLI';
      return forbiddenEverywhere;
    case 'cli':
      if (target.layer === 'plugin' || target.layer === 'registry') return 'cli/ imports no plugin (it is handed the registry)';
      return forbiddenEverywhere;
    case 'plugin':
      if (target.layer === 'plugin' && target.plugin !== source.plugin) {
        return `plugin "${source.plugin}" imports plugin "${target.plugin}" (plugins talk through core/services.ts)`;
      }
      if (target.layer === 'registry') return 'a plugin does not import the plugin registry';
      if (SDK_PLUGINS.has(source.plugin) && target.layer !== 'plugin' && target.layer !== 'other' && to !== SDK_ENTRY) {
        return `plugin "${source.plugin}" is built on the public plugin SDK alone: it imports ${SDK_ENTRY} (tollgate/plugin) and its own folder only`;
      }
      if (target.layer === 'cli') return 'a plugin does not import the CLI';
      return forbiddenEverywhere;
    default:
      return null;
  }
}

function sourceFiles(root) {
  const files = [];
  const walk = (dir) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return; // a tree without this folder has nothing to check there
    }
    for (const entry of entries.sort((x, y) => (x.name < y.name ? -1 : 1))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') walk(path);
      } else if (SOURCE_FILE.test(entry.name) && !entry.name.endsWith('.d.ts')) {
        files.push(path);
      }
    }
  };
  for (const dir of CHECKED_DIRS) walk(join(root, dir));
  return files;
}

function lineOf(text, pos) {
  let line = 1;
  for (let i = 0; i < pos; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/**
 * Every import under core/, cli/ and plugins/ of `root` that breaks a layer rule, as
 * `{ file, line, specifier, reason }` (file repo-relative, line 1-based), in file order.
 * Bare specifiers (packages, `node:`) are never checked.
 */
export function findLayerViolations(root) {
  const violations = [];
  for (const { file, text, imports } of readImports(root)) {
    for (const { specifier, target, typeOnly, pos } of imports) {
      const reason = ruleBroken(file, target) ?? roomRuleBroken(file, target, typeOnly);
      if (reason) violations.push({ file, line: lineOf(text, pos), specifier, reason });
    }
  }
  return violations.concat(findCycles(root));
}

/** Specifiers of `import type` / `export type` declarations (and of imports naming only types), by line. */
function typeOnlySpecifiers(path, text) {
  const keys = new Set();
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false);
  for (const statement of source.statements) {
    let typeOnly;
    if (ts.isImportDeclaration(statement)) {
      const clause = statement.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : null;
      typeOnly = !!clause && (clause.isTypeOnly || (!clause.name && !!named && named.length > 0 && named.every((e) => e.isTypeOnly)));
    } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier) {
      typeOnly = statement.isTypeOnly;
    } else continue;
    if (typeOnly) keys.add(`${statement.moduleSpecifier.text}@${lineOf(text, statement.moduleSpecifier.getStart(source))}`);
  }
  return keys;
}

/** Every relative import of every checked file: `{ file, text, imports: [{ specifier, target, typeOnly, pos }] }`. */
function readImports(root) {
  return sourceFiles(root).map((path) => {
    const text = readFileSync(path, 'utf8');
    const file = toPosix(relative(root, path));
    const typeOnly = typeOnlySpecifiers(path, text);
    const imports = [];
    for (const ref of ts.preProcessFile(text, true, true).importedFiles) {
      const specifier = ref.fileName;
      if (!specifier.startsWith('.') && !specifier.startsWith('/')) continue;
      const target = toPosix(relative(root, resolve(dirname(path), specifier)));
      imports.push({ specifier, target, typeOnly: typeOnly.has(`${specifier}@${lineOf(text, ref.pos)}`), pos: ref.pos });
    }
    return { file, text, imports };
  });
}

/**
 * Import cycles (strongly connected components of the import graph, `import type` included), as
 * violations on the cycle's first file. A cycle of contract files through type-only imports is allowed.
 */
export function findCycles(root) {
  const graph = new Map(readImports(root).map(({ file, imports }) => [file, imports]));
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const components = [];
  let next = 0;
  const visit = (file) => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const { target } of graph.get(file)) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file), low.get(target)));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file), index.get(target)));
    }
    if (low.get(file) !== index.get(file)) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1) components.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  const violations = [];
  for (const component of components) {
    const members = new Set(component);
    const inner = component.flatMap((file) => graph.get(file).filter((i) => members.has(i.target)).map((i) => ({ file, ...i })));
    if (component.every((file) => CONTRACTS.has(file)) && inner.every((i) => i.typeOnly)) continue;
    const culprit = inner.find((i) => !i.typeOnly || !CONTRACTS.has(i.file)) ?? inner[0];
    violations.push({
      file: culprit.file, line: lineOf(readFileSync(join(root, culprit.file), 'utf8'), culprit.pos), specifier: culprit.specifier,
      reason: `import cycle between ${component.join(', ')} (move the shared type to its owner, or split the file)`,
    });
  }
  return violations;
}

/** The report for people: one line per violation, then what to do. */
export function formatViolations(violations) {
  const lines = violations.map((v) => `${v.file}:${v.line}: imports '${v.specifier}': ${v.reason}`);
  return [
    `Layer check failed: ${violations.length} import${violations.length === 1 ? '' : 's'} cross a layer (rules: the top of bin/check-layers.js):`,
    ...lines.map((l) => `  ${l}`),
    'Move shared code into core/ (a domain module, or a service interface in core/services.ts), or pass it in from the composition root.',
  ].join('\n');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(process.argv[2] ?? fileURLToPath(new URL('..', import.meta.url)));
  const violations = findLayerViolations(root);
  if (violations.length > 0) {
    process.stderr.write(formatViolations(violations) + '\n');
    process.exit(1);
  }
  process.stdout.write(`Layer check passed: core/, cli/ and plugins/ import only what their layer and room may, and no import cycle exists (${root}).\n`);
}
