/**
 * `tollgate ledger verify [--repair] [--json]`: compares each gateway user's stored spend
 * (`gateway_users.budget_spent_nanos`, the budget period starting at `budget_period_start`) with the
 * sum of `llm_requests.cost_nanos` logged for that user since that start, integer nano-USD.
 *
 * They agree by construction: a request's spend and its log row commit in one transaction
 * (`core/request-log/write-behind.ts`). They can differ after a write the database refused for good
 * (logged as "write dropped"), a queue that overflowed while the database was down, or data from
 * before issue 39. `--repair` sets the stored spend to the logged sum, compare-and-set: a user whose
 * spend changed meanwhile (a gateway is serving them) is reported and left for the next run. On
 * PostgreSQL the running gateways are told (NOTIFY) and reload the repaired spends.
 *
 * Exit status 1 when a user's figures differ (and were not all repaired), so a cron job can alert.
 * A request that started before a period boundary and ended after it is logged in the old period and
 * billed in the new one: such a difference is one request's cost at most, right after a reset.
 */
import { Command } from 'commander';
import { sql } from 'kysely';
import type { Store } from '../core/store/store.ts';
import { addDataDirOption, withStore } from './context.ts';
import { printJson, printTable } from './output.ts';

interface LedgerOptions {
  repair?: boolean;
  json?: boolean;
  dataDir?: string;
}

/** One user's figures, integer nano-USD. */
export interface LedgerLine {
  userId: number;
  name: string;
  /** Start of the period the stored spend belongs to (ISO); null = nothing spent yet. */
  periodStart: string | null;
  storedNanos: number;
  loggedNanos: number;
  /** `storedNanos - loggedNanos`. */
  differenceNanos: number;
  /** With `--repair`, for a line that differed: whether the stored spend now equals the log. */
  repaired?: boolean;
}

/** Every user's stored spend beside the costs logged since its period started, in one consistent read. */
async function readLedger(store: Store): Promise<LedgerLine[]> {
  const rows = await sql<{ id: number; name: string; period_start: string | null; stored: number; logged: number }>`
    SELECT u.id, u.name, u.budget_period_start AS period_start, u.budget_spent_nanos AS stored,
      coalesce((SELECT sum(r.cost_nanos) FROM llm_requests r
        WHERE r.gateway_user_id = u.id AND r.created_at >= u.budget_period_start), 0) AS logged
    FROM gateway_users u ORDER BY u.id`.execute(store.db);
  return rows.rows.map((r) => {
    const storedNanos = Number(r.stored);
    const loggedNanos = Number(r.logged);
    return { userId: Number(r.id), name: r.name, periodStart: r.period_start, storedNanos, loggedNanos, differenceNanos: storedNanos - loggedNanos };
  });
}

/** Sets a differing user's spend to the logged sum, unless the spend or its period changed since it was read. */
async function repair(store: Store, line: LedgerLine): Promise<boolean> {
  let update = store.db.updateTable('gateway_users').set({ budget_spent_nanos: line.loggedNanos })
    .where('id', '=', line.userId).where('budget_spent_nanos', '=', line.storedNanos);
  update = line.periodStart === null ? update.where('budget_period_start', 'is', null) : update.where('budget_period_start', '=', line.periodStart);
  const result = await update.executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export function ledgerCommand(): Command {
  const ledger = new Command('ledger').description('check the stored budget spend against the request log');

  addDataDirOption(ledger.command('verify').description('compare each user\'s stored spend of its budget period with the costs logged in it; exit 1 when they differ'))
    .option('--repair', 'set a differing spend to the sum of the logged costs')
    .option('--json', 'print JSON')
    .action(async (options: LedgerOptions) => {
      const lines = await withStore(options, async (store) => {
        const read = await readLedger(store);
        if (options.repair) {
          for (const line of read) if (line.differenceNanos !== 0) line.repaired = await repair(store, line);
        }
        return read;
      }, options.repair ? 'writes' : 'reads');
      const differing = lines.filter((l) => l.differenceNanos !== 0);
      const unresolved = differing.filter((l) => l.repaired !== true);
      if (options.json) {
        printJson({ consistent: differing.length === 0, users: lines });
      } else if (differing.length === 0) {
        process.stdout.write(`All ${lines.length} users: stored spend equals the logged costs of their period.\n`);
      } else {
        printTable(differing.map((l) => ({
          user_id: l.userId, name: l.name, period_start: l.periodStart, stored_nanos: l.storedNanos, logged_nanos: l.loggedNanos,
          difference_nanos: l.differenceNanos, ...(options.repair ? { repaired: l.repaired } : {}),
        })), ['user_id', 'name', 'period_start', 'stored_nanos', 'logged_nanos', 'difference_nanos', ...(options.repair ? ['repaired'] : [])]);
        if (unresolved.length > 0 && options.repair) process.stderr.write(`${unresolved.length} user(s) changed while being repaired: run it again.\n`);
        else if (!options.repair) process.stderr.write(`${differing.length} user(s) differ: \`tollgate ledger verify --repair\` sets their spend from the log.\n`);
      }
      if (unresolved.length > 0) process.exitCode = 1;
    });

  return ledger;
}
