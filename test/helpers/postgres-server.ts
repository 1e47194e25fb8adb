/**
 * A real PostgreSQL server (Debian's `postgresql` package, 15) for the tests of the PostgreSQL store:
 * a fresh cluster (`initdb`, trust auth for the user `tollgate`) in a temporary directory, on
 * 127.0.0.1 at a free port, with durability off (`fsync=off`): the tests check behaviour, not crash
 * safety. No system service is needed. As root, the cluster runs as the `postgres` OS user (or
 * `nobody`; spawned with its uid/gid), since PostgreSQL refuses to run as root.
 *
 * The binaries are found at `TOLLGATE_PG_BIN`, else the newest `/usr/lib/postgresql/<major>/bin`.
 * Without them its tests skip, unless `CI` is set: then they fail (`.ci/run` installs them).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, readdirSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';
import { tempDir } from './tmp.ts';
import { freePort } from './free-port.ts';

/** The directory of `initdb` and `postgres`, or null when PostgreSQL is not installed. */
export function postgresBinDir(): string | null {
  if (process.env.TOLLGATE_PG_BIN) return existsSync(join(process.env.TOLLGATE_PG_BIN, 'postgres')) ? process.env.TOLLGATE_PG_BIN : null;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const majors = readdirSync(root).filter((d) => /^\d+$/.test(d)).sort((a, b) => Number(b) - Number(a));
  for (const major of majors) {
    const bin = join(root, major, 'bin');
    if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'postgres'))) return bin;
  }
  return null;
}

const MISSING = 'PostgreSQL is not installed: `apt-get install postgresql` (Debian/Ubuntu), or set TOLLGATE_PG_BIN';

/** `describe`'s `skip` option: a reason when PostgreSQL is missing outside CI, else false. */
export function skipWithoutPostgres(): string | false {
  return !postgresBinDir() && !process.env.CI ? MISSING : false;
}

export interface PostgresServer {
  readonly port: number;
  /** `postgres://tollgate@127.0.0.1:<port>/postgres` (the maintenance database). */
  readonly url: string;
  /** Creates an empty database and returns its URL. */
  createDatabase(name?: string): Promise<string>;
  /** Stops the server (fast shutdown); its data stays for `start()`. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server (fast shutdown: every connection is terminated) and starts it again on the same port and data. */
  restart(): Promise<void>;
  /**
   * Lets the test process exit while the server runs (it is killed on exit anyway): for a server
   * shared by a whole file, which no `after()` stops.
   */
  unref(): void;
}

/** The unprivileged OS user to run as when this process is root (PostgreSQL refuses root), else null. */
function ownerIds(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  for (const user of ['postgres', 'nobody']) {
    const uid = spawnSync('id', ['-u', user], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', user], { encoding: 'utf8' });
    if (uid.status === 0 && gid.status === 0) return { uid: Number(uid.stdout), gid: Number(gid.stdout) };
  }
  return null;
}

function launch(bin: string, dataDir: string, port: number, maxConnections: number): Promise<ChildProcess> {
  const settings = ['-c', `port=${port}`, '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${dataDir}`,
    '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', `max_connections=${maxConnections}`,
    '-c', 'shared_buffers=32MB', '-c', 'log_min_messages=warning'];
  const proc = spawn(join(bin, 'postgres'), ['-D', dataDir, ...settings], { stdio: ['ignore', 'pipe', 'pipe'], ...(ownerIds() ?? {}) });
  let out = '';
  return new Promise((resolve, reject) => {
    // A liveness bound, generous for a busy machine.
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`postgres did not start:\n${out}`));
    }, 120_000);
    const read = (d: Buffer) => {
      out += d.toString();
      if (!out.includes('ready to accept connections')) return;
      clearTimeout(timer);
      proc.stdout.off('data', read);
      proc.stderr.off('data', read);
      proc.stdout.resume();
      proc.stderr.resume();
      resolve(proc);
    };
    proc.stdout.on('data', read);
    proc.stderr.on('data', read);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`postgres exited (${code}):\n${out}`));
    });
  });
}

let databases = 0;

/** Creates the empty database `name` on the server of `maintenanceUrl` and returns its URL. */
async function createDatabaseOn(maintenanceUrl: string, name: string): Promise<string> {
  const client = new pg.Client({ connectionString: maintenanceUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end();
  }
  const url = new URL(maintenanceUrl);
  url.pathname = `/${name}`;
  return url.href;
}

/**
 * Databases of this process on a PostgreSQL server another process runs: `test/run-tests.js` starts
 * one cluster for a whole PostgreSQL run and names its maintenance URL in `TOLLGATE_TEST_PG_URL`, so
 * no test file pays for its own `initdb` and start (seconds each on a loaded machine). Names carry
 * the pid and a random part (pids come round again over a run). When this process exits, every
 * database it made is dropped `WITH (FORCE)` (a gateway child may still hold connections; psql, since
 * an exit handler cannot wait for a promise), so the shared cluster does not grow over the run.
 */
export function sharedPostgresDatabases(maintenanceUrl: string): { createDatabase(): Promise<string> } {
  const made: string[] = [];
  const prefix = `t${process.pid}_${randomBytes(3).toString('hex')}`;
  process.once('exit', () => {
    const bin = postgresBinDir();
    if (!bin || made.length === 0) return;
    const drops = made.flatMap((name) => ['-c', `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`]);
    spawnSync(join(bin, 'psql'), ['-X', '-q', '-d', maintenanceUrl, ...drops], { stdio: 'ignore' });
  });
  return {
    async createDatabase() {
      const name = `${prefix}_${made.length + 1}`;
      made.push(name);
      return createDatabaseOn(maintenanceUrl, name);
    },
  };
}

/** The child and its pipes stop holding the event loop open. */
function unrefProcess(proc: ChildProcess): void {
  proc.unref();
  (proc.stdout as Socket | null)?.unref();
  (proc.stderr as Socket | null)?.unref();
}

/**
 * Starts a fresh PostgreSQL cluster; throws (with how to install it) when it is missing. Stop it in
 * `after()`. `maxConnections`: 200 unless told (a cluster the whole run shares holds more files' pools).
 */
export async function startPostgresServer({ maxConnections = 200 } = {}): Promise<PostgresServer> {
  const bin = postgresBinDir();
  if (!bin) throw new Error(MISSING);
  const dir = tempDir('tollgate-pg-');
  const dataDir = join(dir, 'cluster');
  const owner = ownerIds();
  if (owner) chownSync(dir, owner.uid, owner.gid);
  const initArgs = ['-D', dataDir, '-U', 'tollgate', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'];
  const init = spawnSync(join(bin, 'initdb'), initArgs, { encoding: 'utf8', cwd: dir, ...(owner ?? {}) });
  if (init.status !== 0) throw new Error(`initdb failed:\n${init.stdout}\n${init.stderr}`);
  const port = await freePort();
  let proc: ChildProcess | null = await launch(bin, dataDir, port, maxConnections);
  let detached = false;
  // SIGQUIT is PostgreSQL's immediate shutdown: the postmaster stops its children before it exits. A
  // SIGKILL left them (a background writer was seen alive 30 minutes after a CI run).
  process.once('exit', () => proc?.kill('SIGQUIT'));
  const url = `postgres://tollgate@127.0.0.1:${port}/postgres`;
  return {
    port,
    url,
    createDatabase: (name = `t${process.pid}_${++databases}`) => createDatabaseOn(url, name),
    stop,
    start,
    async restart() {
      await stop();
      await start();
    },
    unref() {
      detached = true;
      if (proc) unrefProcess(proc);
    },
  };
  async function stop(): Promise<void> {
    const running = proc;
    proc = null;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGINT');
    await exited;
  }
  async function start(): Promise<void> {
    if (proc) return;
    proc = await launch(bin!, dataDir, port, maxConnections);
    if (detached) unrefProcess(proc);
  }
}
