/**
 * The docs check's machinery: finds the fenced shell blocks of the docs that are marked runnable
 * (info string `sh runnable` or `bash runnable`) and runs one with bash, carrying the state a reader's
 * terminal keeps from one block to the next. The conventions are in test/docs/runnable-commands.test.ts.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root (this checkout). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The docs the check reads, repository-relative: the README first, then docs/*.md by name, then CONTRIBUTING.md. */
export function docFiles(): string[] {
  const guides = readdirSync(join(REPO_ROOT, 'docs')).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`);
  return ['README.md', ...guides, 'CONTRIBUTING.md'];
}

export interface RunnableBlock {
  /** Repository-relative path of the Markdown file. */
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The block's text, with the fence's indentation removed (a block inside a list item is indented). */
  readonly code: string;
}

const FENCE = /^(\s*)(`{3,}|~{3,})(.*)$/;

/** Every fenced block of `markdown` whose info string is `sh runnable` or `bash runnable`, in order. */
export function runnableBlocks(markdown: string, file: string): RunnableBlock[] {
  const blocks: RunnableBlock[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (!open) continue;
    const [, indent, fence, info] = open as unknown as [string, string, string, string];
    const words = info.trim().split(/\s+/);
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const close = FENCE.exec(lines[j]!);
      if (close && close[2]!.startsWith(fence[0]!) && close[2]!.length >= fence.length && close[3]!.trim() === '') break;
      body.push(lines[j]!.startsWith(indent) ? lines[j]!.slice(indent.length) : lines[j]!.trimStart());
    }
    if ((words[0] === 'sh' || words[0] === 'bash') && words.includes('runnable')) blocks.push({ file, line: i + 1, code: body.join('\n') });
    i = j;
  }
  return blocks;
}

/** What a reader's terminal carries from one block to the next. */
export interface ShellState {
  /** `export -p` of the last block that succeeded ('' at first: the spawn environment only). */
  readonly exports: string;
  readonly cwd: string;
  /** The last gateway key (`tg_...`) a block printed: what a reader pastes where a block says `tg_...`. */
  readonly lastKey: string | null;
}

export interface BlockRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
  /** The state after the block: unchanged when it failed. */
  readonly state: ShellState;
}

export interface RunOptions {
  /** The environment bash starts with. */
  readonly env: NodeJS.ProcessEnv;
  /** Text replacements applied to the block before it runs (e.g. the docs' address → the test gateway's). */
  readonly rewrite?: (code: string) => string;
  readonly timeoutMs?: number;
}

const KEY = /\btg_[A-Za-z0-9_-]{20,}/g;

/** The block's text as it runs: `tg_...` becomes the last key printed, then `options.rewrite`. */
export function preparedCode(block: RunnableBlock, state: ShellState, rewrite: (code: string) => string = (code) => code): string {
  const code = state.lastKey ? block.code.replaceAll('tg_...', state.lastKey) : block.code;
  return rewrite(code);
}

/**
 * Runs one block with bash (`set -euo pipefail`: every command of it must succeed, not only the last)
 * in `state`'s directory with `state`'s exported variables, and returns the state it leaves.
 */
export async function runBlock(block: RunnableBlock, state: ShellState, options: RunOptions): Promise<BlockRun> {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-docs-block-'));
  try {
    const script = [
      // The previous block's exports first, before `set -u` (they may name unset things).
      state.exports,
      `cd ${quote(state.cwd)}`,
      'set -euo pipefail',
      preparedCode(block, state, options.rewrite),
      'set +eu',
      `export -p > ${quote(join(dir, 'exports'))}`,
      `pwd > ${quote(join(dir, 'cwd'))}`,
    ].join('\n');
    writeFileSync(join(dir, 'block.sh'), script);
    const run = await spawnBash(join(dir, 'block.sh'), options.env, options.timeoutMs ?? 120_000);
    if (run.code !== 0 || run.timedOut) return { ...run, state };
    const keys = run.stdout.match(KEY);
    const next: ShellState = {
      exports: readFileSync(join(dir, 'exports'), 'utf8'),
      cwd: readFileSync(join(dir, 'cwd'), 'utf8').trim(),
      lastKey: keys ? keys.at(-1)! : state.lastKey,
    };
    return { ...run, state: next };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function quote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

function spawnBash(path: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Omit<BlockRun, 'state'>> {
  return new Promise((resolve, reject) => {
    // Its own process group, so a timeout ends whatever the block started (a CLI, a curl) too.
    const child = spawn('bash', [path], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, timedOut });
    });
  });
}

/** One failure, as the test reports it: where the block is, how it ended, what it printed. */
export function describeFailure(block: RunnableBlock, code: string, run: Omit<BlockRun, 'state'>): string {
  const ending = run.timedOut ? 'timed out' : run.signal ? `was killed by ${run.signal}` : `exited ${run.code}`;
  return [
    `${block.file}:${block.line}: the block ${ending}`,
    '--- block (as run)', code,
    '--- stdout', run.stdout.slice(-4000),
    '--- stderr', run.stderr.slice(-4000),
  ].join('\n');
}
