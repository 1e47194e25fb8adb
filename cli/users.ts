/** `tollgate users create|list|show|update|delete` */
import { Command, Option } from 'commander';
import {
  BUDGET_PERIODS, checkAlertThresholds, createGatewayUser, deleteGatewayUser, listGatewayUsers, updateGatewayUser, type UserFields,
} from '../core/accounts/gateway-users.ts';
import type { BudgetPeriod } from '../core/store/db-types.ts';
import { isUniqueViolation } from '../core/store/store.ts';
import { addDataDirOption, parsePositiveInt, parseUsd, requireUser, withStore } from './context.ts';
import { CliError, printJson, printRecord, printTable } from './output.ts';
import { auditCli } from './audit-row.ts';

const COLUMNS = ['id', 'name', 'email', 'disabled', 'budget_limit_usd', 'budget_period', 'rpm', 'tpm', 'max_concurrent', 'budget_alert_thresholds', 'created_at'];

interface UserOptions {
  name?: string;
  email?: string;
  budget?: number | 'none';
  budgetPeriod?: BudgetPeriod;
  rpm?: number;
  tpm?: number;
  maxConcurrent?: number;
  alertThresholds?: number[] | null;
  disabled?: boolean;
  json?: boolean;
  dataDir?: string;
}

function addUserFieldOptions(command: Command): Command {
  return command
    .option('--email <email>', 'contact email')
    .option('--budget <usd>', 'budget limit in USD per period ("none" = unlimited)', (v: string) => (v === 'none' ? v : parseUsd(v)))
    .addOption(new Option('--budget-period <period>', 'when the budget resets').choices(BUDGET_PERIODS))
    .option('--rpm <n>', 'requests per minute', parsePositiveInt('--rpm'))
    .option('--tpm <n>', 'tokens per minute', parsePositiveInt('--tpm'))
    .option('--max-concurrent <n>', 'requests in flight at once (default: the manifest\'s rate-limit defaultMaxConcurrent)', parsePositiveInt('--max-concurrent'))
    .option('--alert-thresholds <percents>', 'budget alert thresholds, percents of the budget ("50,80,100"; "none" = no alerts; "default" = the manifest\'s)', parseAlertThresholds);
}

/** `--alert-thresholds`: "50,80,100", "none" ([]) or "default" (null). */
function parseAlertThresholds(value: string): number[] | null {
  if (value === 'default') return null;
  if (value === 'none') return [];
  const checked = checkAlertThresholds(value.split(',').map((part) => (/^\s*\d+\s*$/.test(part) ? Number(part) : part.trim())));
  if (typeof checked === 'string') throw new CliError(`--alert-thresholds ${checked}, or "none" or "default"`);
  return checked;
}

function fieldsOf(options: UserOptions): UserFields {
  const fields: UserFields = {};
  if (options.name !== undefined) fields.name = options.name;
  if (options.email !== undefined) fields.email = options.email;
  if (options.budget !== undefined) fields.budgetUsd = options.budget === 'none' ? null : options.budget;
  if (options.budgetPeriod !== undefined) fields.budgetPeriod = options.budgetPeriod;
  if (options.rpm !== undefined) fields.rpm = options.rpm;
  if (options.tpm !== undefined) fields.tpm = options.tpm;
  if (options.maxConcurrent !== undefined) fields.maxConcurrent = options.maxConcurrent;
  if (options.alertThresholds !== undefined) fields.alertThresholds = options.alertThresholds;
  if (options.disabled !== undefined) fields.disabled = options.disabled;
  return fields;
}

function uniqueName<T>(name: string | undefined, run: () => Promise<T>): Promise<T> {
  return run().catch((err: { code?: string }) => {
    if (isUniqueViolation(err)) throw new CliError(`a gateway user named "${name}" already exists`);
    throw err;
  });
}

export function usersCommand(): Command {
  const users = new Command('users').description('manage gateway users (the holders of API keys)');

  addDataDirOption(addUserFieldOptions(users.command('create').description('create a gateway user')))
    .requiredOption('--name <name>', 'unique name')
    .option('--json', 'print JSON')
    .action(async (options: UserOptions) => {
      const user = await withStore(options, async (store) => {
        const created = await uniqueName(options.name, () => createGatewayUser(store.db, { ...fieldsOf(options), name: options.name! }));
        await auditCli(store, 'users.create', { type: 'user', id: created.id, before: null, after: created });
        return created;
      });
      if (options.json) printJson(user);
      else process.stdout.write(`Created gateway user ${user.id} ("${user.name}").\n`);
    });

  addDataDirOption(users.command('list').description('list gateway users'))
    .option('--json', 'print JSON')
    .action(async (options: UserOptions) => {
      const rows = await withStore(options, (store) => listGatewayUsers(store.db), 'reads');
      if (options.json) printJson(rows);
      else printTable(rows, COLUMNS);
    });

  addDataDirOption(users.command('show').description('show one gateway user').argument('<id|name>'))
    .option('--json', 'print JSON')
    .action(async (idOrName: string, options: UserOptions) => {
      const user = await withStore(options, (store) => requireUser(store, idOrName), 'reads');
      if (options.json) printJson(user);
      else printRecord(user);
    });

  addDataDirOption(addUserFieldOptions(users.command('update').description('change a gateway user').argument('<id|name>')))
    .option('--name <name>', 'new name')
    .addOption(new Option('--disabled <bool>', 'disable or enable the user').choices(['true', 'false']).argParser((v) => v === 'true'))
    .option('--json', 'print JSON')
    .action(async (idOrName: string, options: UserOptions) => {
      const fields = fieldsOf(options);
      if (Object.keys(fields).length === 0) throw new CliError('nothing to update: pass at least one option (see `tollgate users update --help`)');
      const user = await withStore(options, async (store) => {
        const before = await requireUser(store, idOrName);
        const after = await uniqueName(options.name, async () => (await updateGatewayUser(store.db, before.id, fields))!);
        await auditCli(store, 'users.update', { type: 'user', id: before.id, before, after });
        return after;
      });
      if (options.json) printJson(user);
      else process.stdout.write(`Updated gateway user ${user.id} ("${user.name}").\n`);
    });

  addDataDirOption(users.command('delete').description('delete a gateway user and its keys (request history is kept)').argument('<id|name>'))
    .option('--json', 'print JSON')
    .action(async (idOrName: string, options: UserOptions) => {
      const user = await withStore(options, async (store) => {
        const found = await requireUser(store, idOrName);
        await deleteGatewayUser(store.db, found.id);
        await auditCli(store, 'users.delete', { type: 'user', id: found.id, before: found, after: null });
        return found;
      });
      if (options.json) printJson({ id: user.id, deleted: true });
      else process.stdout.write(`Deleted gateway user ${user.id} ("${user.name}") and its keys.\n`);
    });

  return users;
}
