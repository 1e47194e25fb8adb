/**
 * Issue 14, "Tests and bench": the fuzzer's core (bench/fuzz/run-fuzz.ts) against the real
 * `tollgate serve` and the upstream simulators, 1,500 hostile requests of a fixed seed: no crash, no
 * gateway 5xx, every error body in its endpoint's shape, every stream ended properly, no hang, the
 * health probe answered throughout, never held up 2 s of the gateway's CPU time (its wall-clock wait
 * is only reported: a busy machine stretches it); since issue 39 with Responses-state, key-pool and
 * half-open cases and the world's final checks (no good pooled key disabled, the pool still serves,
 * another user's items never sent). `npm run fuzz` runs the same with 10,000+ and any
 * seed. The test's own timeout is a liveness bound: each case already ends at its 30 s hang bound.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startFuzzWorld, type FuzzWorld } from '../../bench/fuzz/fuzz-world.ts';
import { runFuzz, summaryLine } from '../../bench/fuzz/run-fuzz.ts';

const SEED = 20_251_114;
const REQUESTS = 1_500;

let world: FuzzWorld;

before(async () => {
  world = await startFuzzWorld();
});

after(async () => {
  await world?.close();
});

test(`${REQUESTS} hostile requests (seed ${SEED}) find nothing: no crash, 5xx, non-contract body, bad stream end or hang`, { timeout: 600_000 }, async () => {
  const report = await runFuzz(world, { requests: REQUESTS, seed: SEED, concurrency: 16, timeoutMs: 30_000 });
  const findings = report.findings.map((f) => `${f.kind} #${f.index} ${f.method} ${f.url.slice(0, 100)} (${f.description.slice(0, 120)}): ${f.detail.slice(0, 200)}`);
  assert.deepEqual(findings, [], summaryLine(report));
  assert.equal(report.requests, REQUESTS);
  assert.ok(world.alive(), 'the gateway process still runs');
  // The run reached the gateway's real paths, not only its refusals.
  for (const status of ['200', '400', '401', '404', '413']) assert.ok((report.statuses[status] ?? 0) > 0, `no ${status} among ${JSON.stringify(report.statuses)}`);
  assert.ok(report.healthz.probes > 0);
});
