/**
 * Gives back, once per process, the memory the gateway's start-up used, when it has served nothing
 * for a few seconds after it started listening.
 *
 * Why: start-up (compiling the bundle, seeding the price table) leaves V8's young generation grown
 * (32 MB), and at rest nothing shrinks it reliably. Node 24's V8 does not run a full GC at the end of
 * start-up, so its memory reducer never starts: 117 MB at rest against 87–89 MB after this
 * (docs/performance-history.md, seventh round). There one memory-reducing GC (V8's `last-resort`
 * flavour: full GCs until nothing more is freed, then the freed pages go back to the OS) does what
 * the memory reducer would have done. Node 20's memory reducer does start, but it shrinks only when
 * the allocation rate it measures is low, and start-up's allocations stay in that measure until the
 * next GCs dilute them: in 3 of the first 4 bench runs of one session it had not run 25 s after start
 * (idle 113 MB instead of 76). Its V8 (11.3) has no `last-resort` flavour, but shrinks the young
 * generation after any GC that sees a low, non-zero allocation rate over the last 5 s: so two plain
 * full GCs, `QUIET_WINDOW_MS` apart (82–83 MB 11 s after start in 3 of 3 runs, 112–113 without).
 * Each GC takes ~10–60 ms, only while nothing is being served (a request first cancels what is left).
 * Once a gateway has served, V8's own full GCs arm the memory reducer as usual.
 *
 * `gc` comes from a throw-away context made while `--expose-gc` is set, and the flag is set back
 * at once: the gateway's own global never gets a `gc`.
 */
import type { Server } from 'node:http';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** Quiet time after listening before the start-up memory is given back. */
export const START_UP_IDLE_MS = 3_000;

/** V8's `gc` (`--expose-gc`); with no options a full, synchronous collection. */
export type GcFunction = (options?: { type: 'major'; execution: 'sync'; flavor?: 'last-resort' }) => void;

/** V8 12+ (Node 22+) has the `last-resort` flavour; see above for Node 20. */
const HAS_LAST_RESORT_GC = Number(process.versions.v8.split('.')[0]) >= 12;

/**
 * Node 20 only: how long after its first GC the second runs. V8 11.3 shrinks the young generation
 * after a GC only when the allocation rate it measures over the last 5 s (sampled at each GC) is low
 * and not zero, and right after start-up that window still holds start-up's allocations: the first
 * GC closes start-up's sample, the second, with only quiet time in the window, shrinks it.
 */
export const QUIET_WINDOW_MS = 6_000;

let released = false;

/** One full, synchronous GC (memory-reducing where V8 has the flavour); its duration in ms. */
function collect(gc: GcFunction): number {
  const started = performance.now();
  gc(HAS_LAST_RESORT_GC ? { type: 'major', execution: 'sync', flavor: 'last-resort' } : { type: 'major', execution: 'sync' });
  return performance.now() - started;
}

/** Runs the memory-reducing GC now (at most once per process); returns its duration in ms, or null when it already ran. */
export function releaseStartUpMemory(gc: GcFunction = exposedGc()): number | null {
  if (released) return null;
  released = true;
  return collect(gc);
}

/**
 * V8's `gc` without starting the process with `--expose-gc`: taken from a throw-away context made
 * while the flag is set, and the flag is set back at once (no `gc` on the global).
 */
export function exposedGc(): GcFunction {
  setFlagsFromString('--expose-gc');
  try {
    return runInNewContext('gc') as GcFunction;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}

/**
 * Schedules `releaseStartUpMemory` `idleMs` after now unless `server` gets a request or closes
 * first; on Node 20 a plain full GC runs at `idleMs` and the release `quietWindowMs` later (see
 * `QUIET_WINDOW_MS`). `onReleased` gets the GCs' duration (for a debug log line). Call it once the
 * server listens.
 */
export function releaseStartUpMemoryWhenIdle(server: Server, onReleased: (ms: number) => void, idleMs = START_UP_IDLE_MS, quietWindowMs = QUIET_WINDOW_MS): void {
  if (released) return;
  const release = (gc: GcFunction, earlierMs: number) => {
    const ms = releaseStartUpMemory(gc);
    if (ms !== null) onReleased(earlierMs + ms);
  };
  let timer = setTimeout(() => {
    const gc = exposedGc();
    if (HAS_LAST_RESORT_GC) return release(gc, 0);
    const firstMs = collect(gc);
    timer = setTimeout(() => release(gc, firstMs), quietWindowMs);
    timer.unref();
  }, idleMs);
  timer.unref();
  const cancel = () => clearTimeout(timer);
  server.once('request', cancel);
  server.once('close', cancel);
}
