/**
 * A real `redis-server` (Debian's `redis-server` package, 7.x) for the tests of the shared counters:
 * on 127.0.0.1 at a free port, in a temporary directory, persisting nothing (`--save ''
 * --appendonly no`), no system service needed. It can be stopped and started again on the same port,
 * empty, to test what the gateway does while Redis is gone and after it is back.
 *
 * Without `redis-server` on PATH (or at `TOLLGATE_REDIS_SERVER`) its tests skip, unless `CI` is set:
 * then they fail (`.ci/run` installs it).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { freePort } from './free-port.ts';
import { tempDir } from './tmp.ts';

/** The redis-server binary, or null when it is not installed. */
export function redisServerBin(): string | null {
  const bin = process.env.TOLLGATE_REDIS_SERVER || 'redis-server';
  const probe = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  return probe.status === 0 && /Redis server v=/.test(probe.stdout) ? bin : null;
}

const MISSING = 'redis-server is not installed: `apt-get install redis-server` (Debian/Ubuntu), or set TOLLGATE_REDIS_SERVER';

/** `describe`'s `skip` option: a reason when redis-server is missing outside CI, else false. */
export function skipWithoutRedis(): string | false {
  return !redisServerBin() && !process.env.CI ? MISSING : false;
}

export interface RedisServer {
  readonly port: number;
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  /** Stops the server (SIGTERM, then waits for its exit); its data is gone. */
  stop(): Promise<void>;
  /** Starts it again, empty, on the same port. */
  start(): Promise<void>;
}

function launch(bin: string, port: number, dir: string): Promise<ChildProcess> {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no'];
  const proc = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    // A liveness bound (it starts in milliseconds alone), generous for a busy machine.
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`redis-server did not start:\n${out}`));
    }, 60_000);
    const read = (d: Buffer) => {
      out += d.toString();
      if (!out.includes('Ready to accept connections')) return;
      clearTimeout(timer);
      resolve(proc);
    };
    proc.stdout.on('data', read);
    proc.stderr.on('data', read);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited (${code}):\n${out}`));
    });
  });
}

/** Starts a redis-server; throws (with how to install it) when it is missing. Stop it in `after()`. */
export async function startRedisServer(): Promise<RedisServer> {
  const bin = redisServerBin();
  if (!bin) throw new Error(MISSING);
  const port = await freePort();
  const dir = tempDir('tollgate-redis-');
  let proc: ChildProcess | null = await launch(bin, port, dir);
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      const running = proc;
      proc = null;
      if (!running || running.exitCode !== null) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGTERM');
      await exited;
    },
    async start() {
      if (proc) return;
      proc = await launch(bin, port, dir);
    },
  };
}

/**
 * Waits until every gateway at `origins` reports its shared store ready on `/readyz`
 * (`coordination.redis === "ready"`): a replica started on a busy machine may still be connecting,
 * and a request before that is answered by the fail mode. Throws after `timeoutMs`.
 */
export async function untilSharedStoreReady(origins: readonly string[], timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const origin of origins) {
    for (;;) {
      const body = (await (await fetch(`${origin}/readyz`)).json()) as { coordination?: { redis?: string } };
      if (body.coordination?.redis === 'ready') break;
      if (Date.now() > deadline) throw new Error(`${origin}: Redis still not ready after ${timeoutMs} ms (${JSON.stringify(body)})`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/**
 * Redis's own clock (`TIME`), ms: the clock the shared counters' scripts decide by (`now` in
 * `rate-limit-scripts.ts`, `budget-scripts.ts`). A test whose outcome depends on how much of that
 * time passed reads it before and after the scenario, rather than assuming a busy machine ran the
 * scenario within some wall-clock time.
 */
export async function redisTimeMs(client: { time(): Promise<Array<number | string>> }): Promise<number> {
  const [seconds, micros] = await client.time();
  return Number(seconds) * 1_000 + Math.floor(Number(micros) / 1_000);
}
