/** What every command needs: the data dir (`--data-dir`, else TOLLGATE_DATA_DIR, else ./data) and the store. */
import { existsSync, readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { substituteEnv } from '../core/manifest.ts';
import { sql } from 'kysely';
import { databaseUrl, openGatewayStore, resolveDataDir } from '../core/store/data-dir.ts';
import type { Store } from '../core/store/store.ts';
import { findGatewayUser, type GatewayUserView } from '../core/accounts/gateway-users.ts';
import { CliError } from './output.ts';

export function addDataDirOption(command: Command): Command {
  return command.option('--data-dir <dir>', 'data directory (default: $TOLLGATE_DATA_DIR or ./data)');
}

/** Warnings of opening the data dir (permissions tightened), as `warning: <what> <fields>` lines on stderr. */
const stderrWarnings = {
  warn(msg: string, fields?: Record<string, unknown>): void {
    process.stderr.write(`warning: ${msg}${fields ? ` ${JSON.stringify(fields)}` : ''}\n`);
  },
};

/**
 * Opens the store for one command and closes it afterwards. On PostgreSQL a command that writes
 * (`access: 'writes'`, the default) then tells running gateways that the data changed (NOTIFY): their
 * caches (auth-guard's keys, credentials, prices, budgets) listen with `onExternalChange`, and unlike
 * SQLite's `data_version` poll nothing else would tell them, so a `keys revoke` would not reach them.
 * Sent after failures too: a command may have written before it failed. A command that only reads
 * (`'reads'`: the `list` and `show` commands) tells nothing: every gateway would drop and reload its
 * caches for it, so a `users list` run from a cron job would empty them every minute.
 */
export async function withStore<T>(
  options: { dataDir?: string; config?: string }, fn: (store: Store) => Promise<T>, access: 'writes' | 'reads' = 'writes',
): Promise<T> {
  const store = await openGatewayStore(resolveDataDir(options.dataDir), { url: cliDatabaseUrl(options.config), log: stderrWarnings });
  try {
    return await fn(store);
  } finally {
    if (store.engine === 'postgres' && access === 'writes') await announceChange(store);
    await store.close();
  }
}

/**
 * The PostgreSQL URL a command uses, as `tollgate serve` would: the manifest's `store.url` (`--config`
 * where the command takes it, else `./tollgate.json` if present; `${VAR}` substituted), else
 * `TOLLGATE_DATABASE_URL`; null = SQLite in the data dir. Only that field is read here: a manifest
 * that is otherwise invalid is `tollgate check`'s and `serve`'s to report.
 */
export function cliDatabaseUrl(configPath: string | undefined, env: NodeJS.ProcessEnv = process.env): string | null {
  const path = configPath ?? (existsSync('tollgate.json') ? 'tollgate.json' : undefined);
  let url: unknown = null;
  if (path && existsSync(path)) {
    try {
      const manifest = JSON.parse(readFileSync(path, 'utf8')) as { store?: { url?: unknown } };
      url = substituteEnv(manifest.store?.url ?? null, env, []);
    } catch {
      url = null;
    }
  }
  return databaseUrl({ url: typeof url === 'string' ? url : null }, env);
}

/**
 * `store.notifyChange()` sends its NOTIFY without waiting for it; closing the pool at once could drop
 * it before it has a connection. A query queued behind it returns only once the NOTIFY holds one, and
 * closing waits for held connections. Best effort: a lost notification only delays the change until
 * the gateways' caches expire or reconnect.
 */
async function announceChange(store: Store): Promise<void> {
  store.notifyChange();
  try {
    await sql`SELECT 1`.execute(store.db);
  } catch (err) {
    stderrWarnings.warn('could not tell running gateways about this change', { err: String(err) });
  }
}

export async function requireUser(store: Store, idOrName: string): Promise<GatewayUserView> {
  const user = await findGatewayUser(store.db, idOrName);
  if (!user) throw new CliError(`no gateway user "${idOrName}" (see \`tollgate users list\`)`);
  return user;
}

export function parsePositiveInt(label: string) {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) <= 0) throw new CliError(`${label} must be a positive whole number, got "${value}"`);
    return Number(value);
  };
}

export function parseUsd(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n) || n < 0) throw new CliError(`--budget must be a non-negative number of USD, got "${value}"`);
  return n;
}
