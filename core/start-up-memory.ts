/**
 * Gives back, once per process, the memory the gateway's start-up used, when it has served nothing
 * for a few seconds after it started listening.
 *
 * Why: start-up (compiling the bundle, seeding the price table) leaves V8's young generation grown.
 * Node 20's V8 ends start-up in a full GC, after which its memory reducer shrinks the young
 * generation at rest (idle RSS ~76 MB). Node 24's does not run a full GC then, so its memory
 * reducer never starts and the idle gateway kept 32 MB of young generation it does not use: 117 MB
 * at rest against 87–89 MB after this (README Performance, "What the seventh round changed"). One
 * memory-reducing GC (V8's `last-resort` flavour: full GCs until nothing more is freed, then the
 * freed pages go back to the OS) does what the memory reducer would have done; it takes ~10–60 ms,
 * and only while nothing is being served (a request first cancels it). Once a gateway has served,
 * V8's own full GCs arm the memory reducer as usual. Not on Node 20: its V8 (11.3) has no such
 * flavour, its memory reducer does this already (idle ~76 MB), and a plain full GC 3 s after start
 * kept it from doing so in 2 of 4 bench runs (idle 113 MB).
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

let released = false;

/** Runs the memory-reducing GC now (at most once per process); returns its duration in ms, or null when it already ran. */
export function releaseStartUpMemory(): number | null {
  if (released) return null;
  released = true;
  const gc = exposedGc();
  const started = performance.now();
  gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  return performance.now() - started;
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
 * first (on Node 22+ only); `onReleased` gets the GC's duration (for a debug log line). Call it
 * once the server listens.
 */
export function releaseStartUpMemoryWhenIdle(server: Server, onReleased: (ms: number) => void, idleMs = START_UP_IDLE_MS): void {
  if (released || !HAS_LAST_RESORT_GC) return;
  const timer = setTimeout(() => {
    const ms = releaseStartUpMemory();
    if (ms !== null) onReleased(ms);
  }, idleMs);
  timer.unref();
  const cancel = () => clearTimeout(timer);
  server.once('request', cancel);
  server.once('close', cancel);
}
