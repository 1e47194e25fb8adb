/**
 * `npm run bench:plugins`: what each plugin costs. Runs `bench/run.ts` once with the whole default
 * chain and once with each plugin left out (BENCH_WITHOUT), JSON at 50 connections and SSE at 50
 * connections, and prints Tollgate's CPU per request and requests/s for each, with the difference
 * from the whole chain. provider-router is never left out (it is the terminal plugin). Removing
 * auth-guard also removes what depends on a principal (rate limits, budget): its line shows both.
 *
 * Env: as bench/run.ts (BENCH_DURATION_S, BENCH_PINNED).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultManifest } from '../core/default-manifest.ts';
import type { BenchSummary } from './run.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'tollgate-plugin-costs-'));

function run(without: string): BenchSummary {
  const file = join(dir, `${without || 'all'}.json`);
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, BENCH_WITHOUT: without, BENCH_SCENARIOS: 'json-50,sse-50', BENCH_SEQUENTIAL_SAMPLES: '50', BENCH_IDLE_WAIT_S: '1', BENCH_JSON: file },
  });
  if (result.status !== 0) throw new Error(`bench without "${without}" failed (${result.status})`);
  return JSON.parse(readFileSync(file, 'utf8')) as BenchSummary;
}

const figures = (s: BenchSummary, name: string) => {
  const t = s.scenarios.find((x) => x.name === name)!.results;
  return { cpu: t.tollgate.cpuUsPerRequest!, rps: t.tollgate.rps, ceilingCpu: t.ceiling.cpuUsPerRequest! };
};

try {
  const all = run('');
  const out = (line: string) => process.stdout.write(line + '\n');
  out(`Plugin costs (Node ${all.node}, ${all.pinned ? 'pinned' : 'not pinned'}, ${all.durationS}s runs): Tollgate CPU µs/request and requests/s`);
  out('chain                        | JSON×50 CPU µs |  Δ µs | rps  | SSE×50 CPU µs |  Δ µs | rps');
  const line = (label: string, s: BenchSummary) => {
    const [j, e] = [figures(s, 'json-50'), figures(s, 'sse-50')];
    const [ja, ea] = [figures(all, 'json-50'), figures(all, 'sse-50')];
    out(`${label.padEnd(28)} | ${j.cpu.toFixed(0).padStart(14)} | ${(ja.cpu - j.cpu).toFixed(0).padStart(5)} | ${j.rps.toFixed(0).padStart(4)} | ` +
      `${e.cpu.toFixed(0).padStart(13)} | ${(ea.cpu - e.cpu).toFixed(0).padStart(5)} | ${e.rps.toFixed(0)}`);
  };
  line('every plugin', all);
  for (const plugin of defaultManifest.plugins.map((p) => p.name).filter((n) => n !== 'provider-router')) line(`without ${plugin}`, run(plugin));
  const j = figures(all, 'json-50');
  out(`(ceiling proxy in the whole-chain run: ${j.ceilingCpu.toFixed(0)} µs/request JSON)`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
