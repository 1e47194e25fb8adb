#!/usr/bin/env node
// Installs the tools some end-to-end tests drive but the project does not depend on, outside the
// repository's node_modules: the real Claude Code CLI (test/e2e/claude-code.test.ts), the real Codex
// CLI (test/e2e/codex.test.ts) and the real Gemini CLI (test/e2e/gemini-cli.test.ts). Run by .ci/run
// before the tests; idempotent (nothing is fetched for a tool whose pinned version is already there).
//
//   node bin/install-test-tools.js        into $TOLLGATE_TOOLS_DIR, default <os tmpdir>/tollgate-test-tools
//
// Writes <dir>/tools.json ({"claude": {"version", "bin"}, "codex": {...}, "gemini": {...}, "opencode": {...}, "node24": {...}, "aiSdk": {...}}),
// which the tests read (test/helpers/test-tools.ts) to find them.
// - Claude Code 2.x is a native executable (the optional dependency @anthropic-ai/claude-code-<os>-<cpu>,
//   which the package's postinstall copies over bin/claude.exe), so it needs no newer Node than ours.
//   When npm did not run that postinstall, the platform package's binary is used directly.
// - Codex is a native executable too: the package's bin/codex.js launches the one in the optional
//   dependency @openai/codex-<os>-<cpu> (an alias of @openai/codex@<version>-<os>-<cpu>, ~400 MB
//   unpacked, with its own bubblewrap for the sandbox); when the launcher does not run, that binary directly.
// - Node 24 (the npm package node-<os>-<cpu>, a plain binary): current clients need Node 22+ (the Vercel
//   AI SDK 7 does), and CI runs the whole suite on it too (.ci/run).
// - Gemini CLI is a Node script (bundle/gemini.js, engines node >=20) run by the `node` on PATH.
// - The Vercel AI SDK (`ai`, `@ai-sdk/openai`, `@ai-sdk/anthropic`, `@ai-sdk/google`, `zod`), which
//   needs Node 22+: the tests run a client script with the Node 24 binary, resolving the packages from
//   this folder ("bin" is the folder).
// - opencode (test/e2e/opencode.test.ts) is a native executable (Bun-compiled): the package's
//   postinstall links the optional dependency opencode-<os>-<cpu>'s bin/opencode over bin/opencode.exe;
//   when npm did not run that postinstall, the platform package's binary is used directly.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const libc = process.platform === 'linux' && !process.report?.getReport().header.glibcVersionRuntime ? '-musl' : '';
/** Codex's Rust target triple, the folder its platform package keeps the binary in. */
const codexTarget = { 'linux-x64': 'x86_64-unknown-linux-musl', 'linux-arm64': 'aarch64-unknown-linux-musl', 'darwin-x64': 'x86_64-apple-darwin', 'darwin-arm64': 'aarch64-apple-darwin' }[`${process.platform}-${process.arch}`];

/**
 * The AI SDK's providers (and zod) beside `ai` 7.0.173, each on the same `@ai-sdk/provider` 4.0.38 and
 * `@ai-sdk/provider-utils` 5.0.81 as `ai` itself (`npm view <pkg>@<v> dependencies`).
 */
const AI_SDK_PROVIDERS = [['@ai-sdk/openai', '4.0.118'], ['@ai-sdk/anthropic', '4.0.105'], ['@ai-sdk/google', '4.0.121'], ['zod', '4.6.7']];

/** Pinned: a new CLI can send new fields; bump a version on purpose and rerun its test. */
const nodePkg = `node-${process.platform}-${process.arch}`;
const TOOLS = {
  node24: {
    name: 'Node 24', pkg: nodePkg, version: '24.21.0',
    candidates: (dir) => [join(dir, 'node_modules', nodePkg, 'bin', 'node')],
  },
  aiSdk: {
    name: 'Vercel AI SDK', pkg: 'ai', version: '7.0.173', with: AI_SDK_PROVIDERS.map(([name, v]) => `${name}@${v}`),
    candidates: (dir) => [dir],
    // A library, not a binary: installed when every package is at its pinned version.
    installed: (dir, version) => [['ai', version], ...AI_SDK_PROVIDERS].every(([name, v]) => packageVersion(dir, name) === v),
  },
  claude: {
    name: 'Claude Code', pkg: '@anthropic-ai/claude-code', version: '2.1.330',
    candidates: (dir) => [
      join(dir, 'node_modules', '.bin', 'claude'),
      join(dir, 'node_modules', '@anthropic-ai', `claude-code-${process.platform}-${process.arch}${libc}`, 'claude'),
    ],
  },
  codex: {
    name: 'Codex', pkg: '@openai/codex', version: '0.169.0',
    candidates: (dir) => [
      join(dir, 'node_modules', '.bin', 'codex'),
      join(dir, 'node_modules', '@openai', `codex-${process.platform}-${process.arch}`, 'vendor', String(codexTarget), 'bin', 'codex'),
    ],
  },
  gemini: {
    name: 'Gemini CLI', pkg: '@google/gemini-cli', version: '0.61.0',
    candidates: (dir) => [join(dir, 'node_modules', '.bin', 'gemini')],
  },
  opencode: {
    name: 'opencode', pkg: 'opencode-ai', version: '1.18.33',
    candidates: (dir) => [
      join(dir, 'node_modules', '.bin', 'opencode'),
      join(dir, 'node_modules', `opencode-${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}${libc}`, 'bin', 'opencode'),
    ],
  },
};

const dir = process.env.TOLLGATE_TOOLS_DIR || join(tmpdir(), 'tollgate-test-tools');
const manifestPath = join(dir, 'tools.json');

/** The version a candidate binary reports ("2.1.330 (Claude Code)", "codex-cli 0.169.0"), or null when it does not run. */
function versionOf(bin) {
  if (!existsSync(bin)) return null;
  try {
    return execFileSync(bin, ['--version'], { encoding: 'utf8', timeout: 30_000, stdio: ['ignore', 'pipe', 'pipe'], env: { PATH: process.env.PATH, HOME: tmpdir() } }).trim();
  } catch {
    return null;
  }
}

/** Whether `bin` runs and reports `version` ("v24.21.0" counts as 24.21.0). */
const runs = (bin, version) => versionOf(bin)?.split(/\s+/).some((word) => word.replace(/^v/, '') === version) ?? false;

function packageVersion(dir, name) {
  const path = join(dir, 'node_modules', name, 'package.json');
  return existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')).version : null;
}

const works = (tool, bin) => (tool.installed ? tool.installed(bin, tool.version) : runs(bin, tool.version));

const manifest = existsSync(manifestPath) ? JSON.parse(readFileSync(manifestPath, 'utf8')) : {};
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
mkdirSync(dir, { recursive: true });
for (const [id, tool] of Object.entries(TOOLS)) {
  const current = manifest[id];
  if (current?.version === tool.version && works(tool, current.bin)) {
    console.log(`test tools: ${tool.name} ${tool.version} already in ${dir}`);
    continue;
  }
  const started = Date.now();
  execFileSync(npm, ['install', '--prefix', dir, '--no-audit', '--no-fund', '--save-exact', `${tool.pkg}@${tool.version}`, ...(tool.with ?? [])], { stdio: 'inherit' });
  const candidates = tool.candidates(dir);
  const bin = candidates.find((candidate) => works(tool, candidate));
  if (!bin) {
    console.error(`test tools: no working ${tool.name} ${tool.version} after the install; tried ${candidates.join(', ')}`);
    process.exit(1);
  }
  manifest[id] = { version: tool.version, bin };
  writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
  const size = execFileSync('du', ['-sh', dir], { encoding: 'utf8' }).split('\t')[0];
  console.log(`test tools: ${tool.name} ${tool.version} installed in ${dir} (now ${size}) in ${((Date.now() - started) / 1000).toFixed(1)} s: ${bin}`);
}
