/** `tollgate teams create|list|show|update|delete|add-member|remove-member` (docs/admin-api.md "Teams" for the same through HTTP). */
import { Command, Option } from 'commander';
import { BUDGET_PERIODS } from '../core/accounts/gateway-users.ts';
import {
  addTeamMember, createTeam, deleteTeam, findTeam, listTeams, removeTeamMember, teamOfUser, updateTeam, type TeamFields, type TeamView,
} from '../core/accounts/teams.ts';
import type { BudgetPeriod } from '../core/store/db-types.ts';
import type { Store } from '../core/store/store.ts';
import { isUniqueViolation } from '../core/store/store.ts';
import { addDataDirOption, parsePositiveInt, parseUsd, requireUser, withStore } from './context.ts';
import { CliError, printJson, printRecord, printTable } from './output.ts';
import { auditCli } from './audit-row.ts';

const COLUMNS = ['id', 'name', 'budget_limit_usd', 'budget_period', 'rpm', 'tpm', 'max_concurrent', 'models', 'member_ids', 'created_at'];

interface TeamOptions {
  name?: string;
  budget?: number | 'none';
  period?: BudgetPeriod;
  rpm?: number;
  tpm?: number;
  maxConcurrent?: number;
  models?: string[] | null;
  json?: boolean;
  dataDir?: string;
}

/** `--models "openai/*,claude-*"`: glob patterns; "all" = every model (null). */
function parseModels(value: string): string[] | null {
  if (value === 'all') return null;
  const patterns = value.split(',').map((p) => p.trim()).filter((p) => p !== '');
  if (patterns.length === 0) throw new CliError('--models takes comma-separated model patterns such as "openai/*,claude-*", or "all"');
  return patterns;
}

function addTeamFieldOptions(command: Command): Command {
  return command
    .option('--budget <usd>', 'team budget in USD per period ("none" = no team budget)', (v: string) => (v === 'none' ? v : parseUsd(v)))
    .addOption(new Option('--period <period>', 'when the team budget resets').choices(BUDGET_PERIODS))
    .option('--rpm <n>', 'requests per minute of all members together', parsePositiveInt('--rpm'))
    .option('--tpm <n>', 'tokens per minute of all members together', parsePositiveInt('--tpm'))
    .option('--max-concurrent <n>', 'requests of all members in flight at once', parsePositiveInt('--max-concurrent'))
    .option('--models <patterns>', 'models members may call, comma-separated globs ("all" = every model)', parseModels);
}

function fieldsOf(options: TeamOptions): TeamFields {
  const fields: TeamFields = {};
  if (options.name !== undefined) {
    // A team is named on the command line as ID|NAME: a name of digits would read as an id.
    if (/^\d+$/.test(options.name)) throw new CliError('a team name must not be only digits (it would read as a team id)');
    fields.name = options.name;
  }
  if (options.budget !== undefined) fields.budgetUsd = options.budget === 'none' ? null : options.budget;
  if (options.period !== undefined) fields.budgetPeriod = options.period;
  if (options.rpm !== undefined) fields.rpm = options.rpm;
  if (options.tpm !== undefined) fields.tpm = options.tpm;
  if (options.maxConcurrent !== undefined) fields.maxConcurrent = options.maxConcurrent;
  if (options.models !== undefined) fields.models = options.models;
  return fields;
}

function uniqueName<T>(name: string | undefined, run: () => Promise<T>): Promise<T> {
  return run().catch((err: unknown) => {
    if (isUniqueViolation(err)) throw new CliError(`a team named "${name}" already exists`);
    throw err;
  });
}

async function requireTeam(store: Store, idOrName: string): Promise<TeamView> {
  const team = await findTeam(store.db, idOrName);
  if (!team) throw new CliError(`no team "${idOrName}" (see \`tollgate teams list\`)`);
  return team;
}

/** The team with its members' names, as `show` prints it. */
async function withMembers(store: Store, team: TeamView): Promise<TeamView & { members: Array<{ id: number; name: string }> }> {
  const members = team.member_ids.length === 0 ? [] : await store.db.selectFrom('gateway_users').select(['id', 'name']).where('id', 'in', team.member_ids).orderBy('id').execute();
  return { ...team, members };
}

export function teamsCommand(): Command {
  const teams = new Command('teams').description('manage teams (groups of gateway users with a shared budget and limits)');

  addDataDirOption(addTeamFieldOptions(teams.command('create').description('create a team')))
    .requiredOption('--name <name>', 'unique name')
    .option('--json', 'print JSON')
    .action(async (options: TeamOptions) => {
      const fields = fieldsOf(options);
      const team = await withStore(options, async (store) => {
        const created = await uniqueName(options.name, () => createTeam(store.db, { ...fields, name: options.name! }));
        await auditCli(store, 'teams.create', { type: 'team', id: created.id, before: null, after: created });
        return created;
      });
      if (options.json) printJson(team);
      else process.stdout.write(`Created team ${team.id} ("${team.name}").\n`);
    });

  addDataDirOption(teams.command('list').description('list teams'))
    .option('--json', 'print JSON')
    .action(async (options: TeamOptions) => {
      const rows = await withStore(options, (store) => listTeams(store.db), 'reads');
      if (options.json) printJson(rows);
      else printTable(rows, COLUMNS);
    });

  addDataDirOption(teams.command('show').description('show one team and its members').argument('<id|name>'))
    .option('--json', 'print JSON')
    .action(async (idOrName: string, options: TeamOptions) => {
      const team = await withStore(options, async (store) => withMembers(store, await requireTeam(store, idOrName)), 'reads');
      if (options.json) printJson(team);
      else printRecord({ ...team, members: team.members.map((m) => `${m.id} ${m.name}`).join(', ') });
    });

  addDataDirOption(addTeamFieldOptions(teams.command('update').description('change a team').argument('<id|name>')))
    .option('--name <name>', 'new name')
    .option('--json', 'print JSON')
    .action(async (idOrName: string, options: TeamOptions) => {
      const fields = fieldsOf(options);
      if (Object.keys(fields).length === 0) throw new CliError('nothing to update: pass at least one option (see `tollgate teams update --help`)');
      const team = await withStore(options, async (store) => {
        const before = await requireTeam(store, idOrName);
        const after = await uniqueName(options.name, async () => (await updateTeam(store.db, before.id, fields))!);
        await auditCli(store, 'teams.update', { type: 'team', id: before.id, before, after });
        return after;
      });
      if (options.json) printJson(team);
      else process.stdout.write(`Updated team ${team.id} ("${team.name}").\n`);
    });

  addDataDirOption(teams.command('delete').description('delete a team (its members stay, without a team; request history keeps it)').argument('<id|name>'))
    .option('--json', 'print JSON')
    .action(async (idOrName: string, options: TeamOptions) => {
      const team = await withStore(options, async (store) => {
        const found = await requireTeam(store, idOrName);
        await deleteTeam(store.db, found.id);
        await auditCli(store, 'teams.delete', { type: 'team', id: found.id, before: found, after: null });
        return found;
      });
      if (options.json) printJson({ id: team.id, deleted: true });
      else process.stdout.write(`Deleted team ${team.id} ("${team.name}").\n`);
    });

  addDataDirOption(teams.command('add-member').description('make a gateway user a member (moving it out of its current team)').argument('<team>', 'team id or name').argument('<user>', 'user id or name'))
    .option('--json', 'print JSON')
    .action(async (teamRef: string, userRef: string, options: TeamOptions) => {
      const result = await withStore(options, async (store) => {
        const before = await requireTeam(store, teamRef);
        const user = await requireUser(store, userRef);
        const previous = await teamOfUser(store.db, user.id);
        await addTeamMember(store.db, before.id, user.id);
        const after = (await findTeam(store.db, before.id))!;
        await auditCli(store, 'teams.add_member', { type: 'team', id: before.id, before, after });
        return { team: await withMembers(store, after), user, previous };
      });
      if (options.json) printJson(result.team);
      else {
        const moved = result.previous && result.previous.id !== result.team.id ? ` (moved out of team "${result.previous.name}")` : '';
        process.stdout.write(`Added gateway user ${result.user.id} ("${result.user.name}") to team "${result.team.name}"${moved}.\n`);
      }
    });

  addDataDirOption(teams.command('remove-member').description('remove a gateway user from a team').argument('<team>', 'team id or name').argument('<user>', 'user id or name'))
    .option('--json', 'print JSON')
    .action(async (teamRef: string, userRef: string, options: TeamOptions) => {
      const result = await withStore(options, async (store) => {
        const before = await requireTeam(store, teamRef);
        const user = await requireUser(store, userRef);
        if (!(await removeTeamMember(store.db, before.id, user.id))) throw new CliError(`gateway user "${user.name}" is not a member of team "${before.name}"`);
        const after = (await findTeam(store.db, before.id))!;
        await auditCli(store, 'teams.remove_member', { type: 'team', id: before.id, before, after });
        return { team: await withMembers(store, after), user };
      });
      if (options.json) printJson(result.team);
      else process.stdout.write(`Removed gateway user ${result.user.id} ("${result.user.name}") from team "${result.team.name}".\n`);
    });

  return teams;
}
