/**
 * Owner-only permissions for the data directory and the database files: they hold admin password
 * hashes, users' emails and every request's usage, so nobody but the gateway's own OS user may read
 * them. The directory is 0700, `tollgate.db` and SQLite's `-wal` / `-shm` files 0600. Files are
 * created under a 077 umask (SQLite gives the WAL and shared-memory files the database file's mode,
 * but only once they exist); an existing install with looser modes is tightened at start and the
 * caller logs what changed. No-op on Windows, whose ACLs these modes do not describe.
 */
import { chmodSync, existsSync, statSync } from 'node:fs';

/** Mode of the data directory: owner read, write, search. */
export const PRIVATE_DIR_MODE = 0o700;
/** Mode of the database files: owner read and write. */
export const PRIVATE_FILE_MODE = 0o600;

const GROUP_AND_OTHER_BITS = 0o077;

/** A path whose mode was tightened: `fromMode` / `toMode` as octal strings (`"644"` → `"600"`), for the log. */
export interface TightenedPath {
  path: string;
  fromMode: string;
  toMode: string;
}

const enforced = process.platform !== 'win32';

/**
 * Runs `create` with the process umask at 077, so every file and directory it creates is owner-only
 * from its first byte (no window where a fresh `tollgate.db` is world-readable). Synchronous on
 * purpose: the umask is process-wide, and no other code may run while it is changed.
 */
export function withPrivateUmask<T>(create: () => T): T {
  if (!enforced) return create();
  const previous = process.umask(GROUP_AND_OTHER_BITS);
  try {
    return create();
  } finally {
    process.umask(previous);
  }
}

/**
 * Removes the group and other bits of each existing path (mode `& ~077`, capped at `maxMode`:
 * `PRIVATE_DIR_MODE` for a directory, `PRIVATE_FILE_MODE` for a file). Missing paths are skipped.
 * @returns the paths whose mode changed.
 */
export function tightenModes(paths: ReadonlyArray<{ path: string; maxMode: number }>): TightenedPath[] {
  if (!enforced) return [];
  const changed: TightenedPath[] = [];
  for (const { path, maxMode } of paths) {
    if (!existsSync(path)) continue;
    const mode = statSync(path).mode & 0o777;
    if ((mode & ~maxMode) === 0) continue;
    const toMode = mode & maxMode;
    chmodSync(path, toMode);
    changed.push({ path, fromMode: mode.toString(8), toMode: toMode.toString(8) });
  }
  return changed;
}
