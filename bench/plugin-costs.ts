/**
 * `npm run bench:plugins`: what each plugin costs. Runs `bench/run.ts` once with the whole default
 * chain and once with each plugin left out (BENCH_WITHOUT), JSON at 50 connections and SSE at 50
 * connections, and prints Tollgate's CPU per request and requests/s for each, with the difference
 * from the whole chain. provider-router is never left out (it is the terminal plugin). Removing
 * auth-guard also removes what depends on a principal (rate limits, budget): its line shows both.
 *
 * BENCH_ROUNDS (default 1): runs every variant that many times, interleaved (all variants, then all
 * again; each run itself one round of `bench/run.ts`, which would otherwise read BENCH_ROUNDS too and
 * repeat every run inside), and reports each one's median, so a machine that drifts during the run
 * moves every variant alike; on a noisy machine single runs differ by ±40 µs, three rounds bring that
 * well down.
 *
 * Then variants add plugins written on the public SDK to the whole chain (`EXTRAS`): a loaded no-op
 * plugin (what hosting an operator's plugin costs), the cache and the guardrails.
 *
 * The last "without" variant leaves out every plugin but the router (no auth, accounting or log): what the
 * gateway's own request path costs (server, pipeline, validation, routing, translation), to set
 * beside the floor of `BENCH_FLOOR=1 npm run bench`.
 *
 * Each gateway is loaded for BENCH_WARMUP_S (default here 4) before a run is measured: started a
 * second earlier, it is still loading the tokenizer and optimizing its hot functions, which cost its
 * first run ~30 % more a request than the same chain once warm.
 *
 * A last variant turns OpenTelemetry tracing on over the whole chain (`TRACING_VARIANT`, BENCH_TRACING=1
 * of bench/run.ts: a span per request and per attempt, exported to a local sink): its Δ is what tracing
 * costs; the whole chain's figures are tracing off, the default.
 *
 * Env: as bench/run.ts (BENCH_DURATION_S, BENCH_PINNED, BENCH_WARMUP_S), BENCH_ROUNDS, and
 * BENCH_PLUGIN_VARIANTS=extras (only the whole chain and the SDK plugins and tracing added to it) or
 * `tracing` (only the whole chain, tracing off and on).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultManifest } from '../core/default-manifest.ts';
import type { BenchSummary } from './run.ts';
import { median } from './stats.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tollgate-plugin-costs-'));

/** The variant that turns tracing on over the whole chain. */
const TRACING_VARIANT = 'with tracing, OTLP to a sink';

function labelOf(without: string): string {
  if (!without) return 'every plugin';
  if (EXTRAS.has(without) || without === TRACING_VARIANT) return without;
  return without === routerOnly ? 'only provider-router' : `without ${without}`;
}

/** Variants that add plugins written on the SDK to the whole chain, by label: their manifest entries. */
const EXTRAS: ReadonlyMap<string, unknown[]> = new Map([
  ['with a loaded no-op plugin', [{ module: fileURLToPath(new URL('./noop-plugin.mjs', import.meta.url)) }]],
  // The bench's requests carry no temperature, which the cache takes for sampling unless told otherwise.
  ['with the cache, every request a hit', [{ name: 'cache', before: 'budget', config: { scope: 'shared', cacheNonZeroTemperature: true } }]],
  // No answer fits in one byte: every request looks up, misses, goes upstream and is not kept.
  ['with the cache, every request a miss', [{ name: 'cache', before: 'budget', config: { scope: 'shared', cacheNonZeroTemperature: true, maxEntryBytes: 1 } }]],
  // Every built-in detector redacting input and output (the bench's texts match none: the cost of looking).
  ['with guardrails, all detectors', [{
    name: 'guardrails', before: 'budget',
    config: { rules: [{ name: 'pii', detectors: ['email', 'phone', 'payment-card', 'iban', 'secret'], applyTo: 'both', action: 'redact' }] },
  }]],
]);

function run(variant: string): BenchSummary {
  const extra = EXTRAS.get(variant);
  const tracing = variant === TRACING_VARIANT;
  const without = extra || tracing ? '' : variant;
  const file = join(dir, `${(variant || 'all').replace(/[^a-z0-9,-]+/gi, '-')}.json`);
  process.stderr.write(`bench:plugins: ${labelOf(variant)}\n`);
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, BENCH_ROUNDS: '1', BENCH_WARMUP_S: process.env.BENCH_WARMUP_S ?? '4', BENCH_WITHOUT: without, BENCH_EXTRA_PLUGINS: JSON.stringify(extra ?? []), BENCH_SCENARIOS: 'json-50,sse-50', BENCH_SEQUENTIAL_SAMPLES: '50', BENCH_IDLE_WAIT_S: '1', BENCH_JSON: file, BENCH_TRACING: tracing ? '1' : '0' },
  });
  if (result.status !== 0) throw new Error(`bench ${labelOf(variant)} failed (${result.status})`);
  return JSON.parse(readFileSync(file, 'utf8')) as BenchSummary;
}

const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 1));

interface Figures {
  cpu: number;
  rps: number;
  ceilingCpu: number;
}

const figures = (s: BenchSummary, name: string): Figures => {
  const t = s.scenarios.find((x) => x.name === name)!.results;
  return { cpu: t.tollgate.cpuUsPerRequest!, rps: t.tollgate.rps, ceilingCpu: t.ceiling.cpuUsPerRequest! };
};

/** Per variant ('' = every plugin, else the plugins left out), per scenario: the figures of each round. */
const optional = defaultManifest.plugins.map((p) => p.name).filter((n) => n !== 'provider-router');
const routerOnly = optional.join(',');
// BENCH_PLUGIN_VARIANTS=extras: only the whole chain and the variants that add an SDK plugin (a shorter run).
const variants = process.env.BENCH_PLUGIN_VARIANTS === 'tracing' ? ['', TRACING_VARIANT]
  : process.env.BENCH_PLUGIN_VARIANTS === 'extras' ? ['', ...EXTRAS.keys(), TRACING_VARIANT] : ['', ...optional, routerOnly, ...EXTRAS.keys(), TRACING_VARIANT];
const rounds = new Map(variants.map((v) => [v, { json: [] as Figures[], sse: [] as Figures[], node: '', pinned: false, durationS: 0 }]));

try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const without of variants) {
      const s = run(without);
      const r = rounds.get(without)!;
      r.json.push(figures(s, 'json-50'));
      r.sse.push(figures(s, 'sse-50'));
      Object.assign(r, { node: s.node, pinned: s.pinned, durationS: s.durationS });
    }
  }
  const all = rounds.get('')!;
  const out = (line: string) => process.stdout.write(line + '\n');
  out(`Plugin costs (Node ${all.node}, ${all.pinned ? 'pinned' : 'not pinned'}, ${all.durationS}s runs, ` +
    `${ROUNDS === 1 ? 'one round' : `median of ${ROUNDS} interleaved rounds`}): Tollgate CPU µs/request and requests/s`);
  out('chain                        | JSON×50 CPU µs |  Δ µs | rps  | SSE×50 CPU µs |  Δ µs | rps');
  // Δ is what leaving a plugin out saves, or (a variant "with ...") what adding one costs, as a negative number.
  const of = (xs: Figures[], key: keyof Figures) => median(xs.map((x) => x[key]));
  const [jsonAll, sseAll] = [of(all.json, 'cpu'), of(all.sse, 'cpu')];
  for (const without of variants) {
    const r = rounds.get(without)!;
    const [j, e] = [of(r.json, 'cpu'), of(r.sse, 'cpu')];
    out(`${labelOf(without).padEnd(28)} | ${j.toFixed(0).padStart(14)} | ${(jsonAll - j).toFixed(0).padStart(5)} | ` +
      `${of(r.json, 'rps').toFixed(0).padStart(4)} | ${e.toFixed(0).padStart(13)} | ${(sseAll - e).toFixed(0).padStart(5)} | ${of(r.sse, 'rps').toFixed(0)}`);
  }
  out(`(ceiling proxy in the whole-chain runs: ${of(all.json, 'ceilingCpu').toFixed(0)} µs/request JSON)`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
