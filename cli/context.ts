/** What every command needs: the data dir (`--data-dir`, else TOLLGATE_DATA_DIR, else ./data) and the store. */
import type { Command } from 'commander';
import { databaseUrl, openGatewayStore, resolveDataDir } from '../core/data-dir.ts';
import type { Store } from '../core/db.ts';
import { findGatewayUser, type GatewayUserView } from '../core/gateway-users.ts';
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

/** Opens the store for one command and closes it afterwards. */
export async function withStore<T>(options: { dataDir?: string }, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await openGatewayStore(resolveDataDir(options.dataDir), { url: databaseUrl(undefined), log: stderrWarnings });
  try {
    return await fn(store);
  } finally {
    await store.close();
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
