/**
 * The data directory: `tollgate.db` and the master key `secret.key` (base64 of 32 random bytes, mode
 * 0600), unless `TOLLGATE_SECRET` supplies the key. The master key encrypts provider credentials
 * (AES-256-GCM); losing it makes stored credentials unreadable.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { openStore, type Store } from './db.ts';

/** `--data-dir`, else `TOLLGATE_DATA_DIR`, else `./data`; absolute. */
export function resolveDataDir(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return resolve(flag ?? env.TOLLGATE_DATA_DIR ?? 'data');
}

export function databasePath(dataDir: string): string {
  return join(dataDir, 'tollgate.db');
}

/** Opens the store in `dataDir`, creating the directory and database on first use. */
export function openDataDir(dataDir: string): Store {
  mkdirSync(dataDir, { recursive: true });
  return openStore(databasePath(dataDir));
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
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32);
  writeFileSync(file, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return { key, created: true };
}
