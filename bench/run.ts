/**
 * `npm run bench`: Tollgate against a direct call to the same upstream simulator and against the Node
 * ceiling (`ceiling-proxy.ts`, a bare undici pass-through), in one run, reported as ratios.
 * Bounded: loopback only, fixed durations.
 *
 * Processes: the OpenAI simulator, the ceiling proxy, the real `tollgate serve` (the default plugin
 * chain: auth-guard, logger, metrics, response-store, rate-limit, budget, pricing, account,
 * provider-router; the bench user has a budget and rpm/tpm limits so every accounting step runs), and
 * autocannon (this process). Pinned mode (the default where `taskset` exists and there are at least
 * two CPUs): the simulator and the proxy under test share CPU 0, the load generator has CPU 1, so the
 * ratios do not depend on how the OS spreads processes.
 *
 * CPU per request comes from /proc/<pid>/stat (utime + stime) over each run; RSS from
 * /proc/<pid>/status (start: 1 s after listening; idle: at rest, BENCH_IDLE_WAIT_S after listening, before
 * any request, once V8's memory reducer has given back what start-up used, which it does about 8 to 15 s
 * after allocation stops; peak: sampled during the runs). Added
 * latency and time to first token are medians of sequential requests on one connection, timed here
 * with performance.now() (autocannon's percentiles are whole milliseconds).
 *
 * Env: BENCH_DURATION_S (default 5), BENCH_WARMUP_S (unmeasured load before each run, default 1),
 * BENCH_SEQUENTIAL_SAMPLES (default 500), BENCH_PINNED (1/0), BENCH_ROUNDS (default 1: each scenario's runs and
 * the latency medians are made that many times, the targets alternating, and each figure reported is
 * the median of its rounds, the peak RSS their maximum: a VM whose speed drifts moves every target
 * alike, and one slow second no longer decides a ratio),
 * BENCH_WITHOUT (plugins to leave out of the chain, comma-separated: the cost of each plugin),
 * BENCH_EXTRA_PLUGINS (a JSON array of manifest entries added before the router: an SDK plugin's cost),
 * BENCH_SCENARIOS (e.g. `json-50,sse-50`; default all four), BENCH_JSON (write the summary there),
 * BENCH_CPU_PROF (a directory: the gateway runs with --cpu-prof into it), BENCH_NODE_FLAGS (more flags
 * for the gateway's node, space-separated, e.g. `--trace-gc-nvp`), BENCH_IDLE_WAIT_S (default 25),
 * BENCH_FLOOR=1 (also run the floor, `floor-proxy.ts`: the ceiling plus the work no accounting
 * gateway can skip; its rows, its ratios to the ceiling and Tollgate's to it are printed too),
 * BENCH_TRACING=1 (the gateway traces every request, `tracing` in its manifest, exporting OTLP/HTTP to
 * a local sink, `otlp-sink.ts`, run beside the load generator; `npm run bench:plugins` sets it for its
 * "with tracing" variant, the way to read what tracing costs).
 * The last line is always `BENCH_SUMMARY <json>` (`BenchSummary` below): compare runs with it.
 */
import { execFileSync } from 'node:child_process';
import { availableParallelism, tmpdir } from 'node:os';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDataDir } from '../core/store/data-dir.ts';
import { createGatewayUser } from '../core/accounts/gateway-users.ts';
import { createApiKey } from '../core/accounts/api-keys.ts';
import { defaultManifest } from '../core/default-manifest.ts';
import { startProcess, stopProcess, rssMb, type Started } from './processes.ts';
import { load, sequentialMedianMs, WARMUP_S, type RunResult } from './load.ts';
import { median } from './stats.ts';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const SEQUENTIAL_SAMPLES = Number(process.env.BENCH_SEQUENTIAL_SAMPLES ?? 500);
const ROUNDS = Math.max(1, Math.floor(Number(process.env.BENCH_ROUNDS ?? 1)));
const IDLE_WAIT_S = Number(process.env.BENCH_IDLE_WAIT_S ?? 25);
const WITHOUT = (process.env.BENCH_WITHOUT ?? '').split(',').map((s) => s.trim()).filter(Boolean);
/**
 * BENCH_EXTRA_PLUGINS: a JSON array of manifest entries added to the chain (a module by absolute path,
 * or a built-in the default chain leaves out), each just before the plugin its `before` names
 * (default provider-router, the last).
 */
const EXTRA_PLUGINS = JSON.parse(process.env.BENCH_EXTRA_PLUGINS ?? '[]') as Array<Record<string, unknown> & { before?: string }>;

/** `plugins` with `extras` inserted, each before the plugin its `before` names. */
function withExtras<T extends { name: string }>(plugins: readonly T[], extras: typeof EXTRA_PLUGINS): unknown[] {
  const out: unknown[] = [...plugins];
  for (const { before = 'provider-router', ...entry } of extras) {
    const at = out.findIndex((p) => (p as { name?: string }).name === before);
    out.splice(at < 0 ? out.length - 1 : at, 0, entry);
  }
  return out;
}
const root = fileURLToPath(new URL('..', import.meta.url));

function canPin(): boolean {
  if (process.env.BENCH_PINNED === '0' || availableParallelism() < 2) return false;
  try {
    execFileSync('taskset', ['-pc', '1', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    if (process.env.BENCH_PINNED === '1') throw new Error('BENCH_PINNED=1 but taskset failed');
    return false;
  }
}

const FLOOR = process.env.BENCH_FLOOR === '1';
const TRACING = process.env.BENCH_TRACING === '1';
type Target = 'direct' | 'ceiling' | 'floor' | 'tollgate';
/** The targets of this run, in the order they are loaded. */
const TARGETS: readonly Target[] = FLOOR ? ['direct', 'ceiling', 'floor', 'tollgate'] : ['direct', 'ceiling', 'tollgate'];
interface ScenarioSummary {
  name: string;
  stream: boolean;
  connections: number;
  /** `floor` only with BENCH_FLOOR=1. */
  results: Record<Exclude<Target, 'floor'>, RunResult> & { floor?: RunResult };
}

/** The JSON summary (`BENCH_SUMMARY`); field names are stable across runs. */
export interface BenchSummary {
  node: string;
  pinned: boolean;
  durationS: number;
  /** BENCH_ROUNDS when above 1: every figure is the median of that many alternating runs (peak RSS: the maximum). */
  rounds?: number;
  without: string[];
  /** At rest: `BENCH_IDLE_WAIT_S` after start, before any request. */
  idleRssMb: { ceiling: number; tollgate: number };
  /** 1 s after start (what `idleRssMb` was before 2026-11-27): start-up's garbage not yet given back. */
  startRssMb?: { ceiling: number; tollgate: number };
  scenarios: ScenarioSummary[];
  /** True with BENCH_TRACING=1: the gateway exported a span per request and per attempt to a local sink. */
  tracing?: boolean;
  /** Over a direct call; `floor` only with BENCH_FLOOR=1. */
  addedLatencyMs: { ceiling: number; tollgate: number; floor?: number };
  addedTtftMs: { ceiling: number; tollgate: number; floor?: number };
}

const SCENARIOS = [
  { name: 'json-1', stream: false, connections: 1 },
  { name: 'json-50', stream: false, connections: 50 },
  { name: 'sse-1', stream: true, connections: 1 },
  { name: 'sse-50', stream: true, connections: 50 },
].filter((s) => !process.env.BENCH_SCENARIOS || process.env.BENCH_SCENARIOS.split(',').includes(s.name));

const messages = [{ role: 'user', content: 'Say hello' }];

/** One target's runs of a scenario as one result: medians, the peak RSS their maximum, errors summed. */
function combined(runs: readonly RunResult[]): RunResult {
  if (runs.length === 1) return runs[0]!;
  const of = (key: 'rps' | 'p50Ms' | 'p99Ms' | 'p999Ms' | 'requests') => median(runs.map((r) => r[key]));
  const cpu = runs.map((r) => r.cpuUsPerRequest);
  const rss = runs.map((r) => r.maxRssMb);
  const loop = runs.map((r) => r.loopDelayP99Ms);
  return {
    rps: of('rps'), p50Ms: of('p50Ms'), p99Ms: of('p99Ms'), p999Ms: of('p999Ms'), requests: of('requests'),
    loopDelayP99Ms: loop.includes(null) ? null : median(loop as number[]),
    errors: runs.reduce((sum, r) => sum + r.errors, 0),
    cpuUsPerRequest: cpu.includes(null) ? null : median(cpu as number[]),
    maxRssMb: rss.includes(null) ? null : Math.max(...(rss as number[])),
  };
}

async function main(): Promise<void> {
  const pinned = canPin();
  // Under test: CPU 0 (shared with the simulator); this process, the load generator: CPU 1.
  const launch = (args: string[], env: NodeJS.ProcessEnv, ready: RegExp) =>
    pinned ? startProcess(['-c', '0', ...args], env, ready, 'taskset') : startProcess(args.slice(1), env, ready, args[0]);
  const sim = await launch([process.execPath, '--import', 'tsx', 'bench/simulator-process.ts'], { SIM_CONTENT_CHUNKS: '22' }, /(http:\/\/\S+\/v1)\n/);
  const simBase = sim.match[1]!;
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-bench-'));
  const started: Started[] = [sim];
  try {
    const store = openDataDir(dataDir);
    // Limits far above what the bench reaches, so every request pays for the whole accounting path:
    // a local prompt-token count, a budget reservation and settlement, GCRA on requests and tokens.
    const user = await createGatewayUser(store.db, { name: 'bench', budgetUsd: 1_000_000, budgetPeriod: 'monthly', rpm: 100_000_000, tpm: 1_000_000_000 });
    const { key } = await createApiKey(store.db, { gatewayUserId: user.id });
    await store.close();
    const manifestPath = join(dataDir, 'bench-manifest.json');
    const kept = defaultManifest.plugins.filter((p) => !WITHOUT.includes(p.name));
    // The sink shares CPU 1 with the load generator: receiving spans is the collector's cost, not the gateway's.
    const sink = TRACING
      ? await (pinned
        ? startProcess(['-c', '1', process.execPath, '--import', 'tsx', 'bench/otlp-sink.ts'], {}, /otlp sink on (http:\/\/\S+)/, 'taskset')
        : startProcess(['--import', 'tsx', 'bench/otlp-sink.ts'], {}, /otlp sink on (http:\/\/\S+)/))
      : null;
    if (sink) started.push(sink);
    const tracing = sink ? { tracing: { otlpEndpoint: sink.match[1]! } } : {};
    writeFileSync(manifestPath, JSON.stringify({ ...defaultManifest, ...tracing, plugins: withExtras(kept, EXTRA_PLUGINS) }));

    const ceiling = await launch([process.execPath, '--import', 'tsx', 'bench/ceiling-proxy.ts'],
      { CEILING_UPSTREAM: simBase, CEILING_API_KEY: 'sk-bench' }, /listening on (http:\/\/\S+)/);
    started.push(ceiling);
    const floor = FLOOR
      ? await launch([process.execPath, '--import', 'tsx', 'bench/floor-proxy.ts'],
        { CEILING_UPSTREAM: simBase, CEILING_API_KEY: 'sk-bench', FLOOR_CLIENT_KEY: key }, /listening on (http:\/\/\S+)/)
      : null;
    if (floor) started.push(floor);
    // Started as `npx tollgate serve` starts it: the executable bin. (--cpu-prof is refused in
    // NODE_OPTIONS: profiling runs the bin with an explicit node.)
    const bin = join(root, 'bin', 'tollgate.js');
    const nodeFlags = [
      ...(process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean),
      ...(process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : []),
    ];
    const entry = nodeFlags.length > 0 ? [process.execPath, ...nodeFlags, bin] : [bin];
    const gateway = await launch(
      [...entry, 'serve', '--port', '0', '--data-dir', dataDir, '--config', manifestPath],
      { OPENAI_BASE_URL: simBase, OPENAI_API_KEY: 'sk-bench', TOLLGATE_ADMIN_PASSWORD: 'bench-admin-password' },
      // The banner is one write: its `Running:` line says whether the bin chose the bundle.
      /listening on (http:\/\/\S+)[\s\S]*?Running: +(.+)/,
    );
    started.push(gateway);
    // An edited source file makes the bin run the sources through tsx instead of the bundle (a
    // stale dist/ is never run), which costs far more a request: numbers that measure nothing.
    if (!gateway.match[2]!.startsWith('bundle')) {
      throw new Error(`the gateway runs from ${gateway.match[2]}, not the bundle: dist/ is older than a source file. ` +
        'Run `npm run build` first (`npm run bench` does).');
    }
    await new Promise((r) => setTimeout(r, 1000));
    const startRssMb = { ceiling: rssMb(ceiling.proc.pid!), tollgate: rssMb(gateway.proc.pid!) };
    await new Promise((r) => setTimeout(r, Math.max(0, IDLE_WAIT_S - 1) * 1000));
    const idleRssMb = { ceiling: rssMb(ceiling.proc.pid!), tollgate: rssMb(gateway.proc.pid!) };

    const json = { 'content-type': 'application/json' };
    const targets: Record<Target, { url: string; headers: Record<string, string>; model: string; pid: number | null; metricsUrl?: string }> = {
      direct: { url: `${simBase}/chat/completions`, headers: { ...json, authorization: 'Bearer sk-bench' }, model: 'gpt-4o-mini', pid: null },
      ceiling: { url: ceiling.match[1]!, headers: json, model: 'gpt-4o-mini', pid: ceiling.proc.pid! },
      floor: { url: floor?.match[1] ?? '', headers: { ...json, authorization: `Bearer ${key}` }, model: 'openai/gpt-4o-mini', pid: floor?.proc.pid ?? null },
      tollgate: {
        url: `${gateway.match[1]}/api/v1/chat/completions`, headers: { ...json, authorization: `Bearer ${key}` }, model: 'openai/gpt-4o-mini', pid: gateway.proc.pid!,
        metricsUrl: `${gateway.match[1]}/metrics`,
      },
    };
    // Every leg asks for usage, as the gateway does upstream: the same bytes on the upstream leg.
    const bodyFor = (model: string, stream: boolean) =>
      JSON.stringify(stream ? { model, messages, stream: true, stream_options: { include_usage: true } } : { model, messages });

    const out = (line: string) => process.stdout.write(line + '\n');
    out(`Tollgate benchmark: ${DURATION_S}s per run after ${WARMUP_S}s warm-up${ROUNDS > 1 ? `, median of ${ROUNDS} alternating rounds` : ''}, ` +
      `Node ${process.version}, autocannon, loopback, ` +
      `${pinned ? 'pinned (simulator + proxy on CPU 0, load on CPU 1)' : 'not pinned'}${WITHOUT.length ? `, without ${WITHOUT.join(', ')}` : ''}` +
      `${TRACING ? ', tracing on (OTLP/HTTP to a local sink)' : ''}`);
    out(`idle RSS (at rest, ${IDLE_WAIT_S} s after start): ceiling ${idleRssMb.ceiling.toFixed(0)} MB, tollgate ${idleRssMb.tollgate.toFixed(0)} MB` +
      ` (1 s after start: ceiling ${startRssMb.ceiling.toFixed(0)} MB, tollgate ${startRssMb.tollgate.toFixed(0)} MB)`);
    out('scenario | target   |    rps | vs direct | vs ceiling | p50/p99/p99.9 ms | CPU µs/req | vs ceiling | peak RSS MB | loop delay p99 ms');
    const scenarios: ScenarioSummary[] = [];
    for (const s of SCENARIOS) {
      const runs = Object.fromEntries(TARGETS.map((name) => [name, [] as RunResult[]])) as Record<Target, RunResult[]>;
      for (let round = 0; round < ROUNDS; round++) {
        for (const name of TARGETS) {
          const t = targets[name];
          runs[name].push(await load(t.url, t.headers, bodyFor(t.model, s.stream), s.connections, t.pid, DURATION_S, t.metricsUrl));
        }
      }
      const results = {} as ScenarioSummary['results'];
      for (const name of TARGETS) results[name] = combined(runs[name]);
      scenarios.push({ ...s, results });
      for (const name of TARGETS) {
        const r = results[name]!;
        const cpu = r.cpuUsPerRequest === null ? '' : r.cpuUsPerRequest.toFixed(0);
        const cpuRatio = name === 'tollgate' || name === 'floor' ? (r.cpuUsPerRequest! / results.ceiling.cpuUsPerRequest!).toFixed(2) : '';
        out(`${s.name.padEnd(8)} | ${name.padEnd(8)} | ${r.rps.toFixed(0).padStart(6)} | ${(r.rps / results.direct.rps).toFixed(2).padStart(9)} | ` +
          `${(r.rps / results.ceiling.rps).toFixed(2).padStart(10)} | ${`${r.p50Ms}/${r.p99Ms}/${r.p999Ms}`.padStart(16)} | ${cpu.padStart(10)} | ` +
          `${cpuRatio.padStart(10)} | ${(r.maxRssMb === null ? '' : r.maxRssMb.toFixed(0)).padStart(11)} | ` +
          `${r.loopDelayP99Ms === null ? '' : r.loopDelayP99Ms.toFixed(1)}${r.errors ? `  (${r.errors} errors)` : ''}`);
      }
      if (ROUNDS > 1) {
        const cpuOf = (name: Target) => runs[name].map((r) => r.cpuUsPerRequest!.toFixed(0)).join('/');
        out(`${s.name.padEnd(8)} | rounds, CPU µs/req: ${TARGETS.filter((n) => n !== 'direct').map((n) => `${n} ${cpuOf(n)}`).join(', ')}`);
      }
      if (results.floor) {
        out(`${s.name.padEnd(8)} | tollgate ÷ floor: ${(results.tollgate.rps / results.floor.rps).toFixed(2)} of its req/s, ` +
          `${(results.tollgate.cpuUsPerRequest! / results.floor.cpuUsPerRequest!).toFixed(2)}× its CPU per request`);
      }
    }
    const sequential = async (stream: boolean, until: 'end' | 'first-token') => {
      const rounds: Record<Target, number[]> = { direct: [], ceiling: [], floor: [], tollgate: [] };
      for (let round = 0; round < ROUNDS; round++) {
        for (const name of TARGETS) {
          const t = targets[name];
          rounds[name].push(await sequentialMedianMs(t.url, t.headers, bodyFor(t.model, stream), until, SEQUENTIAL_SAMPLES));
        }
      }
      const ms: Record<Target, number> = { direct: 0, ceiling: 0, floor: 0, tollgate: 0 };
      for (const name of TARGETS) ms[name] = median(rounds[name]);
      const added = (name: Target) => `${name} ${ms[name].toFixed(3)} ms (+${(ms[name] - ms.direct).toFixed(3)})`;
      out(`${until === 'end' ? 'non-stream latency' : 'time to first token'} (median of ${SEQUENTIAL_SAMPLES}${ROUNDS > 1 ? `, median of ${ROUNDS} rounds` : ''}, 1 connection): ` +
        `direct ${ms.direct.toFixed(3)} ms, ${TARGETS.slice(1).map(added).join(', ')}`);
      const over = { ceiling: ms.ceiling - ms.direct, tollgate: ms.tollgate - ms.direct };
      return FLOOR ? Object.assign(over, { floor: ms.floor - ms.direct }) : over;
    };
    const addedLatencyMs = await sequential(false, 'end');
    const addedTtftMs = await sequential(true, 'first-token');
    const summary: BenchSummary = {
      node: process.version, pinned, durationS: DURATION_S, ...(ROUNDS > 1 ? { rounds: ROUNDS } : {}), without: WITHOUT,
      idleRssMb, startRssMb, scenarios, addedLatencyMs, addedTtftMs, ...(TRACING ? { tracing: true } : {}),
    };
    if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify(summary, null, 2));
    out(`BENCH_SUMMARY ${JSON.stringify(summary)}`);
  } finally {
    for (const p of started.reverse()) await stopProcess(p);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

// BENCH_MODE=replicas: three replicas on PostgreSQL + Redis against one on SQLite (`replicas.ts`).
if (process.env.BENCH_MODE === 'replicas') await (await import('./replicas.ts')).main();
else await main();
