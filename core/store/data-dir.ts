/**
 * The data directory: `tollgate.db` and the master key `secret.key` (base64 of 32 random bytes, mode
 * 0600), unless `TOLLGATE_SECRET` supplies the key. The master key encrypts provider credentials
 * (AES-256-GCM); losing it makes stored credentials unreadable.
 *
 * Rotation (`tollgate secret rotate`) writes the new key to `secret.key.next`, re-encrypts every
 * record in one transaction, then renames it over `secret.key`; a crash in between leaves both files,
 * and both are in the keyring, so every record still opens. With `TOLLGATE_SECRET`, the operator sets
 * the new key there and the old one in `TOLLGATE_SECRET_PREVIOUS` until the rotation has run.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync, renameSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { openStore, type Store } from './store.ts';
import { openPostgresStore } from './store-postgres.ts';
import type { MetricsRegistry } from '../runtime/metrics.ts';
import type { Log } from '../runtime/log.ts';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, tightenModes, withPrivateUmask } from './private-files.ts';
import { createKeyring, type Keyring } from '../accounts/secret-box.ts';

/** `--data-dir`, else `TOLLGATE_DATA_DIR`, else `./data`; absolute. */
export function resolveDataDir(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return resolve(flag ?? env.TOLLGATE_DATA_DIR ?? 'data');
}

export function databasePath(dataDir: string): string {
  return join(dataDir, 'tollgate.db');
}

/**
 * Opens the store in `dataDir`, creating the directory (0700) and database (0600, and its `-wal` /
 * `-shm`) on first use (`private-files.ts`). An existing directory or database file readable by
 * group or others is tightened first, with a warning on `log` naming each path and its old mode.
 */
export function openDataDir(dataDir: string, log?: Pick<Log, 'warn'>): Store {
  const file = databasePath(dataDir);
  const privatePaths = [
    { path: dataDir, maxMode: PRIVATE_DIR_MODE },
    ...[file, `${file}-wal`, `${file}-shm`].map((path) => ({ path, maxMode: PRIVATE_FILE_MODE })),
  ];
  const tightened = tightenModes(privatePaths);
  const store = withPrivateUmask(() => {
    mkdirSync(dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
    return openStore(file);
  });
  // Another process (an older CLI) may have created the WAL between the check and the open.
  tightened.push(...tightenModes(privatePaths));
  for (const { path, fromMode, toMode } of tightened) {
    log?.warn('tightened the permissions of a data file: it was readable by other OS users', { path, fromMode, toMode });
  }
  return store;
}

/** The PostgreSQL URL in effect: the manifest's `store.url`, else `TOLLGATE_DATABASE_URL`, else none (SQLite). */
export function databaseUrl(settings: { url?: string | null } | undefined, env: NodeJS.ProcessEnv = process.env): string | null {
  return settings?.url || env.TOLLGATE_DATABASE_URL || null;
}

/**
 * The gateway's store: PostgreSQL when `databaseUrl` gives a URL (several replicas), else the SQLite
 * file of `dataDir` (`openDataDir`). The data directory still holds the master key either way.
 */
export async function openGatewayStore(
  dataDir: string,
  options: { url?: string | null; maxConnections?: number; log?: Pick<Log, 'warn'>; metrics?: MetricsRegistry } = {},
): Promise<Store> {
  if (!options.url) return openDataDir(dataDir, options.log);
  return openPostgresStore(options.url, {
    ...(options.maxConnections ? { maxConnections: options.maxConnections } : {}),
    ...(options.metrics ? { metrics: options.metrics } : {}),
    onError: (err) => options.log?.warn('PostgreSQL connection error (reconnecting)', { error: err.message }),
  });
}

/**
 * The 32-byte master key: `TOLLGATE_SECRET` (base64) if set, else `secret.key` in the data dir,
 * created on first use. Throws when `TOLLGATE_SECRET` is not 32 bytes.
 */
export function loadMasterKey(dataDir: string, env: NodeJS.ProcessEnv = process.env): { key: Buffer; created: boolean } {
  if (env.TOLLGATE_SECRET) {
    const key = Buffer.from(env.TOLLGATE_SECRET, 'base64');
    if (key.length !== 32) throw new Error('TOLLGATE_SECRET must be base64 of exactly 32 bytes (e.g. `openssl rand -base64 32`).');
    return { key, created: false };
  }
  const file = join(dataDir, 'secret.key');
  if (existsSync(file)) {
    const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
    if (key.length !== 32) throw new Error(`${file} does not hold base64 of 32 bytes.`);
    return { key, created: false };
  }
  mkdirSync(dataDir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const key = randomBytes(32);
  writeFileSync(file, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return { key, created: true };
}

function parseKey(text: string, what: string): Buffer {
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== 32) throw new Error(`${what} must be base64 of exactly 32 bytes (e.g. \`openssl rand -base64 32\`).`);
  return key;
}

export function nextKeyPath(dataDir: string): string {
  return join(dataDir, 'secret.key.next');
}

/**
 * Every master key this gateway holds: the current one (see `loadMasterKey`) seals; keys named in
 * `TOLLGATE_SECRET_PREVIOUS` (comma-separated base64) and a pending `secret.key.next` also open.
 */
export function loadKeyring(dataDir: string, env: NodeJS.ProcessEnv = process.env): Keyring {
  const { key } = loadMasterKey(dataDir, env);
  const older: Buffer[] = [];
  for (const text of (env.TOLLGATE_SECRET_PREVIOUS ?? '').split(',')) {
    if (text.trim()) older.push(parseKey(text, 'Each key in TOLLGATE_SECRET_PREVIOUS'));
  }
  const next = nextKeyPath(dataDir);
  if (existsSync(next)) older.push(parseKey(readFileSync(next, 'utf8'), next));
  return createKeyring(key, older);
}

/** Writes (or resumes) the pending `secret.key.next` for a file-based rotation and returns it. */
export function prepareNextKey(dataDir: string): Buffer {
  const next = nextKeyPath(dataDir);
  if (existsSync(next)) return parseKey(readFileSync(next, 'utf8'), next);
  const key = randomBytes(32);
  writeFileSync(next, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  return key;
}

/** Completes a file-based rotation: `secret.key.next` replaces `secret.key` (atomic rename). */
export function commitNextKey(dataDir: string): void {
  renameSync(nextKeyPath(dataDir), join(dataDir, 'secret.key'));
}

/**
 * The keyring of a running gateway. `get()` is the keyring loaded at start; `reload()` re-reads the
 * key files and environment, for when a record was sealed under a key this process has not seen
 * (`tollgate secret rotate` ran in another process) and before sealing (so new records never use a
 * key that a finished rotation has retired).
 */
export interface KeyringSource {
  get(): Keyring;
  reload(): Keyring;
}

export function createKeyringSource(dataDir: string, env: NodeJS.ProcessEnv = process.env): KeyringSource {
  let keyring = loadKeyring(dataDir, env);
  return {
    get: () => keyring,
    reload: () => (keyring = loadKeyring(dataDir, env)),
  };
}
