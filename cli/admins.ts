/** `tollgate admins create|list|delete` (admin web UI accounts) */
import { Command } from 'commander';
import { createAdmin, deleteAdmin, listAdmins } from '../core/admin-users.ts';
import { addDataDirOption, withStore } from './context.ts';
import { CliError, printJson, printTable, readStdin } from './output.ts';

interface AdminOptions {
  username?: string;
  passwordStdin?: boolean;
  json?: boolean;
  dataDir?: string;
}

const MIN_PASSWORD_LENGTH = 12;

export function adminsCommand(): Command {
  const admins = new Command('admins').description('manage admin accounts for the web UI');

  addDataDirOption(admins.command('create').description('create an admin (password read from stdin)'))
    .requiredOption('--username <name>', 'login name')
    .requiredOption('--password-stdin', 'read the password from standard input (never from argv)')
    .option('--json', 'print JSON')
    .action(async (options: AdminOptions) => {
      const password = await readStdin();
      if (password.length < MIN_PASSWORD_LENGTH) throw new CliError(`the password must be at least ${MIN_PASSWORD_LENGTH} characters`);
      const admin = await withStore(options, (store) =>
        createAdmin(store.db, options.username!, password).catch((err: { code?: string }) => {
          if (err.code === 'SQLITE_CONSTRAINT_UNIQUE') throw new CliError(`an admin named "${options.username}" already exists`);
          throw err;
        }),
      );
      if (options.json) printJson(admin);
      else process.stdout.write(`Created admin "${admin.username}".\n`);
    });

  addDataDirOption(admins.command('list').description('list admins'))
    .option('--json', 'print JSON')
    .action(async (options: AdminOptions) => {
      const rows = await withStore(options, (store) => listAdmins(store.db));
      if (options.json) printJson(rows);
      else printTable(rows, ['id', 'username', 'created_at']);
    });

  addDataDirOption(admins.command('delete').description('delete an admin').argument('<username>'))
    .option('--json', 'print JSON')
    .action(async (username: string, options: AdminOptions) => {
      const deleted = await withStore(options, (store) => deleteAdmin(store.db, username));
      if (!deleted) throw new CliError(`no admin named "${username}"`);
      if (options.json) printJson({ username, deleted: true });
      else process.stdout.write(`Deleted admin "${username}".\n`);
    });

  return admins;
}
