/**
 * `npm install` on a fresh clone leaves `package-lock.json` as it is and warns about no engine: the
 * lock marks the packages with install scripts as npm finds them once installed, and every package
 * npm installs on this Node declares that it runs on it (optional ones npm skips instead:
 * `better-sqlite3-napi` on Node 20).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface LockEntry {
  version?: string;
  hasInstallScript?: boolean;
  optional?: boolean;
  engines?: { node?: string } | string[];
}

const root = (path: string) => fileURLToPath(new URL(`../../${path}`, import.meta.url));
const packagesOf = (path: string) => (JSON.parse(readFileSync(root(path), 'utf8')) as { packages: Record<string, LockEntry> }).packages;

/** True when `version` (`[major, minor, patch]`) meets one comparator of an engines range (`>=20.18`, `^18`, `20.x`, `*`). */
function meets(version: readonly number[], comparator: string): boolean {
  const m = /^(>=|<=|>|<|=|\^|~)?v?(\d+|\*|x)?(?:\.(\d+|\*|x))?(?:\.(\d+|\*|x))?$/.exec(comparator);
  if (!m) throw new Error(`unreadable engines comparator "${comparator}"`);
  const parts = [m[2], m[3], m[4]].map((p) => (p === undefined || p === '*' || p === 'x' ? null : Number(p)));
  const given = parts.findIndex((p) => p === null);
  const exact = given === -1 ? 3 : given;
  const bound = parts.map((p) => p ?? 0);
  const cmp = (() => {
    for (let i = 0; i < 3; i++) if (version[i] !== bound[i]) return version[i]! - bound[i]!;
    return 0;
  })();
  const samePrefix = (n: number) => version.slice(0, n).every((v, i) => v === bound[i]);
  switch (m[1]) {
    case '>=': return cmp >= 0;
    case '>': return cmp > 0;
    case '<=': return cmp <= 0;
    case '<': return cmp < 0;
    case '^': return samePrefix(1) && cmp >= 0;
    case '~': return samePrefix(Math.min(2, exact)) && cmp >= 0;
    default: return samePrefix(exact);
  }
}

/** True when `version` satisfies an npm engines range: alternatives joined by `||`, each comparators joined by spaces. */
function satisfies(version: readonly number[], range: string): boolean {
  return range.split('||').some((alternative) => alternative.trim().replace(/([<>=^~]+)\s+/g, '$1').split(/\s+/).filter(Boolean).every((c) => meets(version, c)));
}

describe('package-lock.json', () => {
  test('marks every installed package with an install script as npm does, so npm install leaves it unchanged', (t) => {
    if (!existsSync(root('node_modules'))) return t.skip('nothing installed');
    const differing: string[] = [];
    for (const [path, entry] of Object.entries(packagesOf('package-lock.json'))) {
      if (path === '' || !existsSync(root(`${path}/package.json`))) continue;
      const installed = JSON.parse(readFileSync(root(`${path}/package.json`), 'utf8')) as { version?: string; scripts?: Record<string, string> };
      if (installed.version !== entry.version) continue;
      // npm's rule: an install-time script, or a binding.gyp it would build with `node-gyp rebuild`.
      const scripts = installed.scripts ?? {};
      const hasInstallScript = ['preinstall', 'install', 'postinstall'].some((s) => s in scripts) || existsSync(root(`${path}/binding.gyp`));
      if (hasInstallScript !== Boolean(entry.hasInstallScript)) differing.push(`${path}: hasInstallScript should be ${hasInstallScript}`);
    }
    assert.deepEqual(differing, []);
  });

  test('every package npm installs on this Node runs on it (no EBADENGINE warning)', () => {
    assert.ok(satisfies([20, 18, 0], '>=20.18') && !satisfies([20, 18, 0], '>=22') && satisfies([20, 18, 0], '^16 || ^18 || >=20'));
    assert.ok(satisfies([20, 18, 0], '20.x || 22.x') && satisfies([14, 18, 0], '>=16 || 14 >=14.17') && !satisfies([14, 16, 0], '>=16 || 14 >=14.17'));
    const node = process.versions.node.split('.').map(Number);
    const refused = Object.entries(packagesOf('package-lock.json'))
      .filter(([path, entry]) => path !== '' && !entry.optional && !Array.isArray(entry.engines) && entry.engines?.node && !satisfies(node, entry.engines.node))
      .map(([path, entry]) => `${path}@${entry.version} needs node ${(entry.engines as { node: string }).node}`);
    assert.deepEqual(refused, []);
  });
});
