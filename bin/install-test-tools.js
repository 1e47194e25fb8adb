#!/usr/bin/env node
// Installs the tools some end-to-end tests drive but the project does not depend on, outside the
// repository's node_modules: the real Claude Code CLI (test/e2e/claude-code.test.ts). Run by .ci/run
// before the tests; idempotent (nothing is fetched when the pinned version is already there).
//
//   node bin/install-test-tools.js        into $TOLLGATE_TOOLS_DIR, default <os tmpdir>/tollgate-test-tools
//
// Writes <dir>/tools.json ({"claude": {"version", "bin"}}), which the tests read to find the CLI.
// Claude Code 2.x is a native executable (the optional dependency @anthropic-ai/claude-code-<os>-<cpu>,
// which the package's postinstall copies over bin/claude.exe), so it needs no newer Node than ours.
// When npm did not run that postinstall, the platform package's binary is used directly.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Pinned: a new Claude Code can send new fields; bump it on purpose and rerun the test. */
const CLAUDE_CODE_VERSION = '2.1.330';

const dir = process.env.TOLLGATE_TOOLS_DIR || join(tmpdir(), 'tollgate-test-tools');
const manifestPath = join(dir, 'tools.json');

/** The version a candidate binary reports, or null when it does not run. */
function versionOf(bin) {
  if (!existsSync(bin)) return null;
  try {
    return execFileSync(bin, ['--version'], { encoding: 'utf8', timeout: 30_000, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH, HOME: tmpdir() } }).trim();
  } catch {
    return null;
  }
}

function installed() {
  if (!existsSync(manifestPath)) return null;
  const { claude } = JSON.parse(readFileSync(manifestPath, 'utf8'));
  return claude?.version === CLAUDE_CODE_VERSION && versionOf(claude.bin)?.startsWith(CLAUDE_CODE_VERSION) ? claude : null;
}

const current = installed();
if (current) {
  console.log(`test tools: Claude Code ${current.version} already in ${dir}`);
  process.exit(0);
}

mkdirSync(dir, { recursive: true });
const started = Date.now();
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
execFileSync(npm, ['install', '--prefix', dir, '--no-audit', '--no-fund', '--save-exact', `@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}`], { stdio: 'inherit' });

const libc = process.platform === 'linux' && !process.report?.getReport().header.glibcVersionRuntime ? '-musl' : '';
const candidates = [
  join(dir, 'node_modules', '.bin', 'claude'),
  join(dir, 'node_modules', '@anthropic-ai', `claude-code-${process.platform}-${process.arch}${libc}`, 'claude'),
];
const bin = candidates.find((candidate) => versionOf(candidate)?.startsWith(CLAUDE_CODE_VERSION));
if (!bin) {
  console.error(`test tools: no working claude ${CLAUDE_CODE_VERSION} after the install; tried ${candidates.join(', ')}`);
  process.exit(1);
}
writeFileSync(manifestPath, `${JSON.stringify({ claude: { version: CLAUDE_CODE_VERSION, bin } }, null, 2)}\n`);
const size = execFileSync('du', ['-sh', dir], { encoding: 'utf8' }).split('\t')[0];
console.log(`test tools: Claude Code ${CLAUDE_CODE_VERSION} installed in ${dir} (${size}) in ${((Date.now() - started) / 1000).toFixed(1)} s: ${bin}`);
