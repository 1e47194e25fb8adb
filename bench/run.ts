/**
 * `npm run bench`: the gateway against a direct call to the same upstream simulator, in one run,
 * reported as ratios. Bounded: loopback only, fixed durations.
 *
 * Processes: the OpenAI simulator (own process), the real `tollgate serve` (own process, the default
 * plugin chain: auth-guard, logger, metrics, rate-limit, budget, pricing, account, provider-router;
 * the bench user has a budget and rpm/tpm limits so every accounting step runs), and autocannon
 * (this process). Gateway CPU per
 * request comes from /proc/<pid>/stat (utime + stime) over each run; RSS is sampled from
 * /proc/<pid>/status during the runs. Added latency and time to first token are medians of
 * sequential requests on one connection, timed here with performance.now() (autocannon's
 * percentiles are whole milliseconds, too coarse for sub-millisecond overheads).
 *
 * Env: BENCH_DURATION_S (default 5), BENCH_SEQUENTIAL_SAMPLES (default 500).
 */
import type { ChildProcess } from 'node:child_process';
import { CLK_TCK, cpuTicks, startProcess } from './processes.ts';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { request as undiciRequest, Agent } from 'undici';
import { openDataDir } from '../core/data-dir.ts';
import { createGatewayUser } from '../core/gateway-users.ts';
import { createApiKey } from '../core/api-keys.ts';

const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 5);
const SEQUENTIAL_SAMPLES = Number(process.env.BENCH_SEQUENTIAL_SAMPLES ?? 500);
const root = fileURLToPath(new URL('..', import.meta.url));

function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').split('\n').find((l) => l.startsWith('VmRSS:'))!;
  return Number(line.split(/\s+/)[1]) / 1024;
}

interface RunResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  errors: number;
  cpuUsPerRequest: number | null;
  maxRssMb: number | null;
}

async function load(url: string, headers: Record<string, string>, body: string, connections: number, pid: number | null): Promise<RunResult> {
  // Warm up (JIT, keep-alive pools) before measuring.
  await autocannon({ url, method: 'POST', headers, body, connections, duration: 1 });
  const ticksBefore = pid ? cpuTicks(pid) : 0;
  let maxRss = 0;
  const sampler = pid ? setInterval(() => (maxRss = Math.max(maxRss, rssMb(pid))), 250) : null;
  const result = await autocannon({ url, method: 'POST', headers, body, connections, duration: DURATION_S });
  if (sampler) clearInterval(sampler);
  const ticks = pid ? cpuTicks(pid) - ticksBefore : 0;
  const requests = result.requests.total;
  return {
    rps: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests,
    errors: result.errors + result.non2xx,
    cpuUsPerRequest: pid && requests ? (ticks * (1e6 / CLK_TCK)) / requests : null,
    maxRssMb: pid ? maxRss : null,
  };
}

/**
 * Median over sequential requests on one keep-alive connection, in ms: time to the whole response
 * (`until: 'end'`), or to the first content chunk of a stream (`until: 'first-token'`).
 */
async function sequentialMedianMs(url: string, headers: Record<string, string>, body: string, until: 'end' | 'first-token'): Promise<number> {
  const agent = new Agent({ connections: 1 });
  const samples: number[] = [];
  for (let i = 0; i < SEQUENTIAL_SAMPLES + 20; i++) {
    const start = performance.now();
    const res = await undiciRequest(url, { method: 'POST', headers, body, dispatcher: agent });
    let first = 0;
    for await (const part of res.body) {
      if (!first && until === 'first-token' && part.toString().includes('"content":"')) first = performance.now();
    }
    if (i >= 20) samples.push((until === 'end' ? performance.now() : first) - start);
  }
  await agent.close();
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)]!;
}

const messages = [{ role: 'user', content: 'Say hello' }];

async function main(): Promise<void> {
  const sim = await startProcess(['--import', 'tsx', 'bench/simulator-process.ts'], { SIM_CONTENT_CHUNKS: '22' }, /(http:\/\/\S+\/v1)\n/);
  const simBase = sim.match[1]!;
  const dataDir = mkdtempSync(join(tmpdir(), 'tollgate-bench-'));
  const store = openDataDir(dataDir);
  // Limits far above what the bench reaches, so every request pays for the whole accounting path:
  // a local prompt-token count, a budget reservation and settlement, GCRA on requests and tokens.
  const user = await createGatewayUser(store.db, { name: 'bench', budgetUsd: 1_000_000, budgetPeriod: 'monthly', rpm: 100_000_000, tpm: 1_000_000_000 });
  const { key } = await createApiKey(store.db, { gatewayUserId: user.id });
  await store.close();
  // Started as `npx tollgate serve` starts it: the executable bin, with the V8 flags of its shebang.
  const gateway = await startProcess(
    ['serve', '--port', '0', '--data-dir', dataDir],
    { OPENAI_BASE_URL: simBase, OPENAI_API_KEY: 'sk-bench', TOLLGATE_ADMIN_PASSWORD: 'bench-admin-password' },
    /listening on (http:\/\/\S+)/,
    join(root, 'bin', 'tollgate.js'),
  );
  const gwPid = gateway.proc.pid!;
  const targets = {
    direct: { url: `${simBase}/chat/completions`, headers: { authorization: 'Bearer sk-bench', 'content-type': 'application/json' }, model: 'gpt-4o-mini' },
    gateway: { url: `${gateway.match[1]}/api/v1/chat/completions`, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, model: 'openai/gpt-4o-mini' },
  };
  // The direct stream asks for usage too, as the gateway does upstream: same bytes on the upstream leg.
  const bodyFor = (model: string, stream: boolean) =>
    JSON.stringify(stream ? { model, messages, stream: true, stream_options: { include_usage: true } } : { model, messages });

  const rows: string[] = [];
  const out = (line: string) => {
    rows.push(line);
    process.stdout.write(line + '\n');
  };
  out(`Tollgate benchmark: ${DURATION_S}s per run after 1s warm-up, Node ${process.version}, autocannon load generator, loopback`);
  out('scenario                   | direct rps | gateway rps | ratio | direct p50/p99 ms | gateway p50/p99 ms | Δp50 ms | gw CPU µs/req | gw max RSS MB');
  try {
    for (const stream of [false, true]) {
      for (const connections of [1, 50]) {
        const d = await load(targets.direct.url, targets.direct.headers, bodyFor(targets.direct.model, stream), connections, null);
        const g = await load(targets.gateway.url, targets.gateway.headers, bodyFor(targets.gateway.model, stream), connections, gwPid);
        if (d.errors || g.errors) out(`  (errors: direct ${d.errors}, gateway ${g.errors})`);
        const name = `${stream ? 'stream (24 events)' : 'non-stream'} x${connections}`.padEnd(26);
        out(
          `${name} | ${d.rps.toFixed(0).padStart(10)} | ${g.rps.toFixed(0).padStart(11)} | ${(g.rps / d.rps).toFixed(2).padStart(5)} | ` +
            `${`${d.p50Ms}/${d.p99Ms}`.padStart(17)} | ${`${g.p50Ms}/${g.p99Ms}`.padStart(18)} | ${(g.p50Ms - d.p50Ms).toFixed(0).padStart(7)} | ` +
            `${g.cpuUsPerRequest!.toFixed(0).padStart(13)} | ${g.maxRssMb!.toFixed(0).padStart(13)}`,
        );
      }
    }
    const sequential = async (label: string, stream: boolean, until: 'end' | 'first-token') => {
      const d = await sequentialMedianMs(targets.direct.url, targets.direct.headers, bodyFor(targets.direct.model, stream), until);
      const g = await sequentialMedianMs(targets.gateway.url, targets.gateway.headers, bodyFor(targets.gateway.model, stream), until);
      out(`${label} (median of ${SEQUENTIAL_SAMPLES}, 1 connection): direct ${d.toFixed(3)} ms, gateway ${g.toFixed(3)} ms, added ${(g - d).toFixed(3)} ms`);
    };
    await sequential('non-stream latency', false, 'end');
    await sequential('time to first token', true, 'first-token');
  } finally {
    gateway.proc.kill('SIGTERM');
    sim.proc.kill('SIGTERM');
    await new Promise((r) => gateway.proc.once('exit', r));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
