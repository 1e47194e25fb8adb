#!/usr/bin/env node
// Runs every test/**/*.test.ts with node:test through tsx. (Node 20's --test does not expand globs.)
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';

const root = new URL('.', import.meta.url).pathname;
const files = [];
(function walk(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path);
    else if (entry.name.endsWith('.test.ts')) files.push(relative(process.cwd(), path));
  }
})(root);
const filter = process.argv.slice(2);
const selected = filter.length ? files.filter((f) => filter.some((x) => f.includes(x))) : files;
// With no file named, `node --test` would look for tests everywhere itself (examples and helpers too).
if (selected.length === 0) {
  process.stderr.write(`no test file matches ${filter.map((x) => JSON.stringify(x)).join(', ')}\n`);
  process.exit(1);
}
// Test files mostly wait (child processes, sockets, Chromium): on a 2-core machine two at a time
// finish the suite sooner than Node's default of one (availableParallelism() - 1). TEST_CONCURRENCY overrides.
const concurrency = Number(process.env.TEST_CONCURRENCY ?? Math.max(2, availableParallelism() - 1));
// TEST_FILE_TIMES=<file>: also write each file's time there (test/helpers/file-times-reporter.mjs).
const reporters = ['--test-reporter=spec', '--test-reporter-destination=stdout'];
if (process.env.TEST_FILE_TIMES) reporters.push(`--test-reporter=${join(root, 'helpers/file-times-reporter.mjs')}`, `--test-reporter-destination=${process.env.TEST_FILE_TIMES}`);
// A PostgreSQL run (TOLLGATE_TEST_STORE=postgres) shares one cluster, started here, among all its test
// files: each file makes (and at its exit drops) a database per data dir on it (test/helpers/test-store.ts)
// instead of running initdb and starting a cluster of its own, seconds each on a loaded machine. Its
// exit handler stops it when this process exits.
const env = { ...process.env };
if (env.TOLLGATE_TEST_STORE === 'postgres' && !env.TOLLGATE_TEST_PG_URL) {
  const { register } = await import('tsx/esm/api');
  register();
  const { postgresBinDir, startPostgresServer } = await import('./helpers/postgres-server.ts');
  // Without PostgreSQL each file skips or fails saying how to install it, as before.
  if (postgresBinDir()) {
    // Two files at a time, each with its gateways' pools: more than one file's 200.
    const server = await startPostgresServer({ maxConnections: 500 });
    env.TOLLGATE_TEST_PG_URL = server.url;
  }
}
const child = spawn(process.execPath, ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...reporters, ...selected.sort()], { stdio: 'inherit', env });
// Ctrl-C reaches the test processes too; this one waits for them, so its exit handlers (the cluster's stop) run.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
