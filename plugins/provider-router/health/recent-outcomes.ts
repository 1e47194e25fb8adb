/**
 * The recent attempts of one deployment or pooled key, for the admin page "Upstream health": a ring
 * of the last `CAPACITY` outcomes, read over the last `WINDOW_MS`. Memory per tracked thing is fixed.
 */
import type { LastUpstreamError, RecentOutcomes } from '../../../core/services.ts';

const CAPACITY = 200;
const WINDOW_MS = 5 * 60_000;

export interface OutcomeLog {
  /** Records an attempt at `atMs` (ms since the epoch) that took `latencyMs`; `error` set when it failed. */
  add(atMs: number, latencyMs: number, error: { status: number | null; code: string } | null): void;
  summary(nowMs: number): RecentOutcomes;
  lastError(): LastUpstreamError | null;
}

export function createOutcomeLog(): OutcomeLog {
  const at = new Float64Array(CAPACITY);
  const latency = new Float64Array(CAPACITY);
  const failed = new Uint8Array(CAPACITY);
  let next = 0;
  let size = 0;
  let last: LastUpstreamError | null = null;
  return {
    add(atMs, latencyMs, error) {
      at[next] = atMs;
      latency[next] = latencyMs;
      failed[next] = error ? 1 : 0;
      next = (next + 1) % CAPACITY;
      size = Math.min(size + 1, CAPACITY);
      if (error) last = { at: new Date(atMs).toISOString(), status: error.status, code: error.code };
    },
    summary(nowMs) {
      const latencies: number[] = [];
      let errors = 0;
      for (let i = 0; i < size; i++) {
        if (at[i]! < nowMs - WINDOW_MS) continue;
        latencies.push(latency[i]!);
        errors += failed[i]!;
      }
      if (latencies.length === 0) return { attempts: 0, error_rate: 0, p50_latency_ms: null };
      latencies.sort((a, b) => a - b);
      const p50 = latencies[Math.floor((latencies.length - 1) / 2)]!;
      return { attempts: latencies.length, error_rate: Math.round((errors / latencies.length) * 1000) / 1000, p50_latency_ms: Math.round(p50) };
    },
    lastError: () => last,
  };
}
