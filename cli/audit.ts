/** `tollgate audit verify|list` (docs/audit.md): check the audit log's hash chain; list its rows. */
import { Command } from 'commander';
import { verifyAuditChain } from '../core/audit/verify.ts';
import { listAudit, type AuditFilters } from '../core/audit/query.ts';
import { nowIso } from '../core/store/store.ts';
import { addDataDirOption, parsePositiveInt, withStore } from './context.ts';
import { CliError, printJson, printTable } from './output.ts';

interface AuditOptions {
  dataDir?: string;
  json?: boolean;
  actor?: string;
  action?: string;
  objectType?: string;
  from?: string;
  to?: string;
  limit?: number;
}

function parseTime(flag: string): (value: string) => string {
  return (value) => {
    const ms = Date.parse(value);
    if (Number.isNaN(ms)) throw new CliError(`${flag} must be an ISO-8601 time such as 2026-01-31 or 2026-01-31T12:00:00Z`);
    return nowIso(ms);
  };
}

export function auditCommand(): Command {
  const audit = new Command('audit').description('the audit log: who changed what, hash-chained');

  addDataDirOption(audit.command('verify').description('check every row of the audit log against the hash chain; exit 1 naming the first bad row'))
    .option('--json', 'print JSON')
    .action(async (options: AuditOptions) => {
      const result = await withStore(options, (store) => verifyAuditChain(store), 'reads');
      if (options.json) printJson(result);
      else if (result.ok) process.stdout.write(`${result.rows} rows, chain intact.\n`);
      else process.stderr.write(`audit log broken at row ${result.firstBadId}: ${result.reason} (${result.rows} rows before it are intact)\n`);
      if (!result.ok) process.exitCode = 1;
    });

  addDataDirOption(audit.command('list').description('list audit-log rows, newest first'))
    .option('--actor <actor>', 'only this actor (an admin username, cli:<os user>)')
    .option('--action <action>', 'only this action (users.update), or a prefix ending in * (users.*)')
    .option('--object-type <type>', 'only this object type (user, key, credential, price, ...)')
    .option('--from <iso-8601>', 'rows at or after this time', parseTime('--from'))
    .option('--to <iso-8601>', 'rows before this time', parseTime('--to'))
    .option('--limit <n>', 'at most this many rows (default 100)', parsePositiveInt('--limit'))
    .option('--json', 'print JSON')
    .action(async (options: AuditOptions) => {
      const filters: AuditFilters = { limit: options.limit ?? 100 };
      if (options.actor) filters.actor = options.actor;
      if (options.action) filters.action = options.action;
      if (options.objectType) filters.objectType = options.objectType;
      if (options.from) filters.from = options.from;
      if (options.to) filters.to = options.to;
      const page = await withStore(options, (store) => listAudit(store, filters), 'reads');
      if (options.json) printJson(page.data);
      else printTable(page.data.map((r) => ({ ...r, before: r.before === null ? '' : JSON.stringify(r.before), after: r.after === null ? '' : JSON.stringify(r.after) })), ['id', 'at', 'actor', 'role', 'ip', 'action', 'object_type', 'object_id']);
    });

  return audit;
}
