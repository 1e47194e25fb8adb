/**
 * A load driver for replica chaos tests: `loops` concurrent loops send OpenAI chat completions
 * (every other one streamed) round-robin to the replicas, and record what the client saw of each:
 *
 * - served: 200, and for a stream a complete one ending in `data: [DONE]`; with its `x-request-id`;
 * - refused: any other status, with the error body's `code` and the `retry-after` header;
 * - incomplete: a 200 stream cut before `[DONE]`;
 * - failed: no answer (connection refused or reset, or no answer within the liveness bound).
 *
 * The replicas' origins are read at each request, so a test can restart one on a new port. Waits are
 * bounded by counts of outcomes (`until`), with a generous liveness deadline, never by wall-clock time.
 */
import assert from 'node:assert/strict';
import { sleep } from './sim-http.ts';

export interface Outcome {
  /** The replica's index in the origins list. */
  replica: number;
  /** How many times that replica had been restarted when the request was sent. */
  generation: number;
  stream: boolean;
  kind: 'served' | 'refused' | 'incomplete' | 'failed';
  requestId: string | null;
  status: number | null;
  code: string | null;
  retryAfter: string | null;
  error: string | null;
}

export interface ReplicaLoad {
  readonly outcomes: readonly Outcome[];
  count(filter: (o: Outcome) => boolean): number;
  /** Resolves once `check` holds for the outcomes so far; throws after `timeoutMs` (a liveness bound). */
  until(what: string, check: (load: ReplicaLoad) => boolean, timeoutMs?: number): Promise<void>;
  /** Resolves once `count` more requests matching `filter` (default: any replica) were served. */
  more(count: number, filter?: (o: Outcome) => boolean): Promise<void>;
  /** Stops the loops and waits for the requests in flight. */
  stop(): Promise<void>;
}

/** No answer within this is a failure (a hung request), not a slow one: a liveness bound for a busy machine. */
const REQUEST_TIMEOUT_MS = 120_000;
/** A pause after a request that was not served, so loops facing a refusing or dead replica do not spin. */
const PAUSE_AFTER_FAILURE_MS = 20;

function causeOf(err: unknown): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  return [e.name, e.message, e.cause?.code ?? e.cause?.message].filter(Boolean).join(': ');
}

async function send(origin: string, key: string, stream: boolean, replica: number, generation: number): Promise<Outcome> {
  const base: Outcome = { replica, generation, stream, kind: 'failed', requestId: null, status: null, code: null, retryAfter: null, error: null };
  const body = stream
    ? { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } }
    : { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
  try {
    const res = await fetch(`${origin}/api/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await res.text();
    const seen = { ...base, status: res.status, requestId: res.headers.get('x-request-id'), retryAfter: res.headers.get('retry-after') };
    if (res.status !== 200) {
      let code: string | null = null;
      try {
        code = (JSON.parse(text) as { error?: { code?: string | null } }).error?.code ?? null;
      } catch {
        code = `not JSON: ${text.slice(0, 80)}`;
      }
      return { ...seen, kind: 'refused', code };
    }
    if (stream) return text.trimEnd().endsWith('data: [DONE]') ? { ...seen, kind: 'served' } : { ...seen, kind: 'incomplete', error: text.slice(-200) };
    assert.ok((JSON.parse(text) as { choices?: unknown[] }).choices?.length, text);
    return { ...seen, kind: 'served' };
  } catch (err) {
    return { ...base, error: causeOf(err) };
  }
}

/**
 * Starts the loops against `origins()` (read at each request) with the bearer `key`;
 * `generation(i)` is replica i's restart count, recorded with each outcome.
 */
export function startReplicaLoad(options: {
  origins: () => readonly string[];
  generation: (replica: number) => number;
  key: string;
  loops: number;
  /** What went wrong that no wait can mend (a replica died unexpectedly), or null: `until` throws it at once. */
  broken?: () => string | null;
}): ReplicaLoad {
  const outcomes: Outcome[] = [];
  let running = true;
  let sent = 0;
  const loop = async () => {
    while (running) {
      const n = sent++;
      const origins = options.origins();
      const replica = n % origins.length;
      const outcome = await send(origins[replica]!, options.key, n % 2 === 1, replica, options.generation(replica));
      outcomes.push(outcome);
      if (outcome.kind !== 'served') await sleep(PAUSE_AFTER_FAILURE_MS);
    }
  };
  const loops = Array.from({ length: options.loops }, loop);
  const load: ReplicaLoad = {
    outcomes,
    count: (filter) => outcomes.reduce((n, o) => n + (filter(o) ? 1 : 0), 0),
    async until(what, check, timeoutMs = 180_000) {
      const deadline = Date.now() + timeoutMs;
      const seen = () => ['served', 'refused', 'incomplete', 'failed'].map((k) => `${k} ${load.count((o) => o.kind === k)}`).join(', ');
      while (!check(load)) {
        // A dead replica is reported at once: no wait would mend it.
        const broken = options.broken?.();
        if (broken) throw new Error(`${broken}\n(while waiting for ${what}; ${seen()})`);
        if (Date.now() > deadline) throw new Error(`still waiting for ${what} after ${timeoutMs} ms (${seen()})`);
        await sleep(25);
      }
    },
    async more(count, filter = () => true) {
      const target = load.count((o) => o.kind === 'served' && filter(o)) + count;
      await load.until(`${count} more served`, () => load.count((o) => o.kind === 'served' && filter(o)) >= target);
    },
    async stop() {
      running = false;
      await Promise.all(loops);
    },
  };
  return load;
}
