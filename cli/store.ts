/**
 * `tollgate migrate`: brings the store's schema up to date and says where it is (the gateway also
 * migrates at start; run this first when several replicas are upgraded, or to check a URL).
 * `tollgate export-sqlite --to postgres://…`: moves a single-node install (the data dir's SQLite
 * file) into an empty PostgreSQL database (`core/store/export-sqlite.ts`).
 */
import { Command } from 'commander';
import { databasePath, openDataDir, resolveDataDir } from '../core/store/data-dir.ts';
import { redactDatabaseUrl } from '../core/store/store-postgres.ts';
import { ExportRefused, exportSqliteToPostgres } from '../core/store/export-sqlite.ts';
import { addDataDirOption, withStore } from './context.ts';
import { CliError, printJson } from './output.ts';
import { existsSync } from 'node:fs';

export function migrateCommand(): Command {
  return addDataDirOption(new Command('migrate'))
    .description('apply pending schema migrations to the store (SQLite in the data dir, or TOLLGATE_DATABASE_URL)')
    .option('--json', 'print JSON')
    .action(async (options: { dataDir?: string; json?: boolean }) => {
      const result = await withStore(options, async (store) => ({ engine: store.engine, location: store.location, schema_version: store.schemaVersion }));
      if (options.json) printJson(result);
      else process.stdout.write(`${result.engine} store at ${result.location}: schema version ${result.schema_version} (up to date)\n`);
    });
}

export function exportSqliteCommand(): Command {
  return addDataDirOption(new Command('export-sqlite'))
    .description("copy the data dir's SQLite database into an empty PostgreSQL database (for several replicas)")
    .requiredOption('--to <url>', 'the PostgreSQL URL (postgres://user:password@host:5432/db); the database must exist and be empty')
    .option('--json', 'print JSON')
    .action(async (options: { dataDir?: string; to: string; json?: boolean }) => {
      if (!/^postgres(ql)?:\/\//.test(options.to)) throw new CliError('--to must be a postgres:// URL');
      const dataDir = resolveDataDir(options.dataDir);
      if (!existsSync(databasePath(dataDir))) throw new CliError(`no SQLite database at ${databasePath(dataDir)} (--data-dir)`);
      // Opening migrates the SQLite file to this version first, so both sides have one schema.
      const store = openDataDir(dataDir);
      try {
        if (store.engine !== 'sqlite') throw new CliError(`the data dir's store is PostgreSQL (${store.location}): export reads the SQLite file`);
        const result = await exportSqliteToPostgres(store.sqlite, options.to, {
          onTable: (table, rows) => {
            if (!options.json) process.stdout.write(`${table}: ${rows} row(s)\n`);
          },
        });
        if (options.json) printJson({ to: redactDatabaseUrl(options.to), schema_version: result.schemaVersion, tables: result.tables });
        else process.stdout.write(`Exported to ${redactDatabaseUrl(options.to)} (schema version ${result.schemaVersion}). Point the gateway at it with store.url or TOLLGATE_DATABASE_URL; keep secret.key (or TOLLGATE_SECRET): stored credentials need it.\n`);
      } catch (err) {
        if (err instanceof ExportRefused) throw new CliError(err.message);
        if ((err as { code?: string }).code === 'ECONNREFUSED') throw new CliError(`cannot reach PostgreSQL at ${redactDatabaseUrl(options.to)}`);
        throw err;
      } finally {
        await store.close();
      }
    });
}
