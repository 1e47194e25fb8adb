/**
 * The fuzzer's core, shared by `npm run fuzz` (bench/fuzz.ts) and the CI test
 * (test/hardening/fuzz.test.ts): sends cases 0..requests-1 of a seed at bounded concurrency, judges
 * each answer (oracle.ts), probes `GET /healthz` on its own connection every `probeEveryMs` (the
 * event loop's responsiveness: its latency percentiles are reported; a probe not answered 200, or
 * held up `freezeMs` or more, is a finding) and checks every `checkEvery` cases that the gateway
 * process is still alive and healthy. A dead gateway ends the run at once with a `crash` finding.
 * Half-open cases (a raw connection the gateway must close after its timeout, seconds later) run
 * beside the others, at most `MAX_HALF_OPEN` at a time, so they do not hold a worker; the run waits
 * for them at its end, then asks the target's `finalChecks` (the key pool, the other user's items).
 *
 * "Held up" is measured on the gateway's CPU clock when the target offers one (`cpuMs`): the CPU
 * time the gateway spent while the probe waited. A frozen or overloaded gateway spends it; one that
 * other processes on a busy machine keep from running does not, and its wall-clock wait says
 * nothing about the gateway.
 */
import { Agent, get } from 'node:http';
import { fuzzCase, type FuzzCase } from './cases.ts';
import { judge, judgeHalfOpen, type Finding } from './oracle.ts';
import { send, sendHalfOpen } from './send.ts';
import type { FuzzIdentities } from './fuzz-world.ts';

export interface FuzzTarget {
  origin: string;
  ids: FuzzIdentities;
  /** True while the gateway process runs. */
  alive(): boolean;
  /** CPU time the gateway process has used, ms; null when it cannot be read (then probes are judged by wall time). */
  cpuMs?(): number | null;
  /** The world's own rules after the run, each broken one as a sentence. */
  finalChecks?(): Promise<string[]>;
}

/** Half-open connections open at once (each holds a gateway socket for its timeout). */
const MAX_HALF_OPEN = 8;

export interface FuzzOptions {
  requests: number;
  seed: number;
  concurrency: number;
  /** Longest a case may take before it is a hang, ms. */
  timeoutMs: number;
  /** Only these case indexes (replaying findings); default all. */
  only?: readonly number[];
  probeEveryMs?: number;
  /** A health probe held up this long (the gateway's CPU time while it waited, else wall time) is a freeze finding, ms. */
  freezeMs?: number;
  checkEvery?: number;
  /** Called after each case (progress). */
  onCase?(c: FuzzCase, done: number): void;
}

/** A finding with the case that produced it, for the report. */
export interface ReportedFinding extends Finding {
  description: string;
  method: string;
  url: string;
}

export interface FuzzReport {
  seed: number;
  requests: number;
  crashes: number;
  fiveXx: number;
  nonContractBodies: number;
  hangs: number;
  /** Status findings, stream endings, resets, leaks, health probes. */
  otherFindings: number;
  healthz: { probes: number; p50Ms: number; p99Ms: number; maxMs: number };
  /** Answers by status (0: no answer). */
  statuses: Record<string, number>;
  durationMs: number;
  findings: ReportedFinding[];
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

/** One `GET /healthz`: its status and latency, ms (status 0 on failure or after `timeoutMs`). */
function probe(origin: string, agent: Agent, timeoutMs: number): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve) => {
    const req = get(`${origin}/healthz`, { agent, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - started }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
  });
}

/** Runs the cases and resolves with the report (it never throws for what it finds). */
export async function runFuzz(target: FuzzTarget, options: FuzzOptions): Promise<FuzzReport> {
  const started = performance.now();
  const freezeMs = options.freezeMs ?? 2_000;
  const checkEvery = options.checkEvery ?? 500;
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const probeAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const findings: ReportedFinding[] = [];
  const statuses: Record<string, number> = {};
  const probeMs: number[] = [];
  const indexes = options.only ?? Array.from({ length: options.requests }, (_, i) => i);
  const note = (c: FuzzCase | null, f: Finding) => findings.push({ ...f, description: c?.description ?? '', method: c?.method ?? 'GET', url: c?.url ?? '/healthz' });
  let crashed = false;

  let probing = true;
  const prober = (async () => {
    while (probing && !crashed) {
      const cpuBeforeMs = target.cpuMs?.() ?? null;
      const result = await probe(target.origin, probeAgent, freezeMs * 5);
      const cpuAfterMs = target.cpuMs?.() ?? null;
      const heldMs = cpuBeforeMs !== null && cpuAfterMs !== null ? cpuAfterMs - cpuBeforeMs : result.ms;
      probeMs.push(result.ms);
      if (result.status !== 200 || heldMs > freezeMs) {
        note(null, { kind: 'health', index: -1, detail: `GET /healthz answered ${result.status} in ${result.ms.toFixed(0)} ms (${heldMs.toFixed(0)} ms held up)` });
      }
      await new Promise((r) => setTimeout(r, options.probeEveryMs ?? 200));
    }
  })();

  let next = 0;
  let done = 0;
  const checkAlive = async (): Promise<boolean> => {
    if (!target.alive()) {
      crashed = true;
      note(null, { kind: 'crash', index: indexes[Math.max(0, next - 1)] ?? -1, detail: `the gateway process exited after ${done} cases (the last ${options.concurrency} sent are suspects)` });
      return false;
    }
    return true;
  };
  const halfOpen = new Set<Promise<void>>();
  const startHalfOpen = async (c: FuzzCase) => {
    while (halfOpen.size >= MAX_HALF_OPEN) await Promise.race(halfOpen);
    const running: Promise<void> = sendHalfOpen(target.origin, c.halfOpen!).then((outcome) => {
      const status = Number(/^HTTP\/1\.1 (\d{3}) /.exec(outcome.received.toString('latin1'))?.[1] ?? 0);
      statuses[status] = (statuses[status] ?? 0) + 1;
      for (const f of judgeHalfOpen(c, outcome)) note(c, f);
      halfOpen.delete(running);
    });
    halfOpen.add(running);
  };
  const worker = async () => {
    while (next < indexes.length && !crashed) {
      const c = fuzzCase(options.seed, indexes[next++]!, target.ids);
      if (c.halfOpen) {
        await startHalfOpen(c);
        done++;
        options.onCase?.(c, done);
        continue;
      }
      const outcome = await send(target.origin, c, agent, options.timeoutMs);
      statuses[outcome.status] = (statuses[outcome.status] ?? 0) + 1;
      for (const f of judge(c, outcome)) note(c, f);
      done++;
      options.onCase?.(c, done);
      if (done % checkEvery === 0 && !(await checkAlive())) return;
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  await Promise.all(halfOpen);
  if (!crashed) await checkAlive();
  probing = false;
  await prober;
  if (!crashed) {
    const last = await probe(target.origin, probeAgent, 5_000);
    if (last.status !== 200) note(null, { kind: 'health', index: -1, detail: `final GET /healthz answered ${last.status}` });
    for (const detail of (await target.finalChecks?.()) ?? []) note(null, { kind: 'world', index: -1, detail });
  }
  agent.destroy();
  probeAgent.destroy();
  const sorted = [...probeMs].sort((a, b) => a - b);
  const count = (kind: Finding['kind']) => findings.filter((f) => f.kind === kind).length;
  return {
    seed: options.seed,
    requests: done,
    crashes: count('crash'),
    fiveXx: count('5xx'),
    nonContractBodies: count('body'),
    hangs: count('hang'),
    otherFindings: findings.length - count('crash') - count('5xx') - count('body') - count('hang'),
    healthz: { probes: sorted.length, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99), maxMs: sorted.at(-1) ?? 0 },
    statuses,
    durationMs: performance.now() - started,
    findings: findings.sort((a, b) => a.index - b.index),
  };
}

/** The report's one-line summary: `requests, crashes, 5xx, non-contract bodies, hangs, healthz p99`. */
export function summaryLine(r: FuzzReport): string {
  return `requests ${r.requests}, crashes ${r.crashes}, 5xx ${r.fiveXx}, non-contract bodies ${r.nonContractBodies}, hangs ${r.hangs}, ` +
    `other findings ${r.otherFindings}, healthz p50/p99/max ${r.healthz.p50Ms.toFixed(1)}/${r.healthz.p99Ms.toFixed(1)}/${r.healthz.maxMs.toFixed(1)} ms ` +
    `(${r.healthz.probes} probes), ${(r.durationMs / 1000).toFixed(1)} s, seed ${r.seed}`;
}
