/**
 * Load for the benchmarks: a fixed-duration autocannon run measuring the target process's CPU and
 * RSS, and the median latency of sequential requests on one connection.
 */
import autocannon from 'autocannon';
import { request as undiciRequest, Agent } from 'undici';
import { CLK_TCK, cpuTicks, rssMb } from './processes.ts';

export interface RunResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** autocannon's 99.9th percentile, whole ms: the tail a periodic stall (a flush, a GC) shows in. */
  p999Ms: number;
  /**
   * The target's event-loop delay, 99th percentile over the measured run, ms (its `/metrics`
   * `tollgate_nodejs_eventloop_lag_p99_seconds`, from `perf_hooks.monitorEventLoopDelay`, which
   * prom-client resets at each scrape); null for a target without `/metrics`.
   */
  loopDelayP99Ms: number | null;
  requests: number;
  errors: number;
  /** CPU (user + system) the target process spent per request, µs; null without a pid (direct). */
  cpuUsPerRequest: number | null;
  /** Peak RSS of the target process during the run, MB. */
  maxRssMb: number | null;
}

/**
 * Seconds of unmeasured load before each run (`BENCH_WARMUP_S`, default 1): the JIT's tiers, the
 * keep-alive pools, the tokenizer's first load. A gateway started a second ago costs ~30 % more a
 * request in its first seconds than once its hot functions are optimized.
 */
export const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 1);

/**
 * A warm-up (`WARMUP_S`), then `durationS` of POSTs on `connections` connections. `metricsUrl`: the
 * target's Prometheus endpoint, scraped before the run (which resets its event-loop histogram) and
 * after it (outside the CPU measured), for `loopDelayP99Ms`.
 */
export async function load(url: string, headers: Record<string, string>, body: string, connections: number, pid: number | null, durationS: number, metricsUrl?: string): Promise<RunResult> {
  if (WARMUP_S > 0) await autocannon({ url, method: 'POST', headers, body, connections, duration: WARMUP_S });
  if (metricsUrl) await loopDelayP99Ms(metricsUrl);
  const ticksBefore = pid ? cpuTicks(pid) : 0;
  let maxRss = 0;
  const sampler = pid ? setInterval(() => (maxRss = Math.max(maxRss, rssMb(pid))), 250) : null;
  const result = await autocannon({ url, method: 'POST', headers, body, connections, duration: durationS });
  if (sampler) clearInterval(sampler);
  const ticks = pid ? cpuTicks(pid) - ticksBefore : 0;
  const requests = result.requests.total;
  return {
    rps: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    p999Ms: result.latency.p99_9,
    loopDelayP99Ms: metricsUrl ? await loopDelayP99Ms(metricsUrl) : null,
    requests,
    errors: result.errors + result.non2xx,
    cpuUsPerRequest: pid && requests ? (ticks * (1e6 / CLK_TCK)) / requests : null,
    maxRssMb: pid ? maxRss : null,
  };
}

/** The event-loop delay p99 a `/metrics` scrape reports (since the previous scrape), ms. */
async function loopDelayP99Ms(metricsUrl: string): Promise<number | null> {
  const res = await undiciRequest(metricsUrl);
  const text = await res.body.text();
  const line = /^tollgate_nodejs_eventloop_lag_p99_seconds(?:\{[^}]*\})? (\S+)$/m.exec(text);
  return line ? Number(line[1]) * 1000 : null;
}

/**
 * Median over `samples` sequential requests (after 20 unmeasured) on one keep-alive connection, ms:
 * to the whole response (`until: 'end'`), or to the first content chunk of a stream (`'first-token'`).
 */
export async function sequentialMedianMs(url: string, headers: Record<string, string>, body: string, until: 'end' | 'first-token', samples: number): Promise<number> {
  const agent = new Agent({ connections: 1 });
  const times: number[] = [];
  for (let i = 0; i < samples + 20; i++) {
    const start = performance.now();
    const res = await undiciRequest(url, { method: 'POST', headers, body, dispatcher: agent });
    let first = 0;
    for await (const part of res.body as AsyncIterable<Buffer>) {
      if (!first && until === 'first-token' && part.toString().includes('"content":"')) first = performance.now();
    }
    if (i >= 20) times.push((until === 'end' ? performance.now() : first) - start);
  }
  await agent.close();
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}
