/**
 * `npm run fuzz`: hostile requests at the real gateway (issue 14). Starts the upstream simulators and
 * `tollgate serve` (bench/fuzz/fuzz-world.ts), sends FUZZ_REQUESTS cases of seed FUZZ_SEED
 * (bench/fuzz/cases.ts) at FUZZ_CONCURRENCY, judges every answer against the contract
 * (bench/fuzz/oracle.ts), prints the summary and each finding with its seed and index, and exits 1 on
 * any finding.
 *
 * Env: FUZZ_REQUESTS (default 10000), FUZZ_SEED (default: random, printed), FUZZ_CONCURRENCY (16),
 * FUZZ_TIMEOUT_MS (30000: a case slower than this is a hang), FUZZ_ONLY (comma-separated indexes:
 * replay those cases of the seed), FUZZ_JSON (write the whole report there).
 * The last line is `FUZZ_SUMMARY <json>` (the report without its findings).
 */
import { writeFileSync } from 'node:fs';
import { startFuzzWorld } from './fuzz/fuzz-world.ts';
import { fuzzCase } from './fuzz/cases.ts';
import { runFuzz, summaryLine } from './fuzz/run-fuzz.ts';

const requests = Number(process.env.FUZZ_REQUESTS ?? 10_000);
const seed = Number(process.env.FUZZ_SEED ?? Math.floor(Math.random() * 2 ** 31));
const concurrency = Number(process.env.FUZZ_CONCURRENCY ?? 16);
const timeoutMs = Number(process.env.FUZZ_TIMEOUT_MS ?? 30_000);
const only = process.env.FUZZ_ONLY ? process.env.FUZZ_ONLY.split(',').map(Number) : undefined;
const out = (line: string) => process.stdout.write(line + '\n');

const world = await startFuzzWorld();
let exitCode: number;
try {
  out(`Tollgate fuzz: ${only ? `cases ${only.join(', ')}` : `${requests} requests`}, seed ${seed}, concurrency ${concurrency}, gateway ${world.origin}`);
  const report = await runFuzz(world, {
    requests, seed, concurrency, timeoutMs, ...(only ? { only } : {}),
    onCase: (_c, done) => {
      if (done % 1000 === 0) out(`  ${done} sent`);
    },
  });
  out(summaryLine(report));
  out(`statuses: ${Object.entries(report.statuses).map(([s, n]) => `${s}: ${n}`).join(', ')}`);
  for (const f of report.findings.slice(0, 200)) {
    const c = f.index >= 0 ? fuzzCase(seed, f.index, world.ids) : null;
    out(`FINDING ${f.kind} #${f.index} ${c ? `${c.method} ${c.url.slice(0, 120)} (${c.description.slice(0, 160)})` : ''}: ${f.detail.slice(0, 300)}`);
    if (f.index >= 0) out(`  replay: FUZZ_SEED=${seed} FUZZ_ONLY=${f.index} npm run fuzz`);
  }
  if (report.findings.length > 200) out(`... and ${report.findings.length - 200} more findings`);
  if (report.crashes > 0) out(`gateway output (last 3000 characters):\n${world.gateway.output().slice(-3000)}`);
  if (process.env.FUZZ_JSON) writeFileSync(process.env.FUZZ_JSON, JSON.stringify(report, null, 2));
  const { findings, ...summary } = report;
  out(`FUZZ_SUMMARY ${JSON.stringify({ ...summary, findings: findings.length })}`);
  exitCode = findings.length === 0 ? 0 : 1;
} finally {
  await world.close();
}
process.exit(exitCode);
