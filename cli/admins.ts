/** `tollgate admins create|list|passwd|delete` (admin web UI accounts) */
import { Command } from 'commander';
import { adminSignIn, createAdmin, deleteAdmin, listAdmins, MIN_ADMIN_PASSWORD_LENGTH, setAdminPassword } from '../core/accounts/admin-users.ts';
import { isUniqueViolation } from '../core/store/store.ts';
import { addDataDirOption, withStore } from './context.ts';
import { auditCli } from './audit-row.ts';
import { CliError, printJson, printTable, readStdin } from './output.ts';

interface AdminOptions {
  username?: string;
  passwordStdin?: boolean;
  json?: boolean;
  dataDir?: string;
}

/** The password piped to the command, checked for length. */
async function readPassword(): Promise<string> {
  const password = await readStdin();
  if (password.length < MIN_ADMIN_PASSWORD_LENGTH) throw new CliError(`the password must be at least ${MIN_ADMIN_PASSWORD_LENGTH} characters`);
  return password;
}

export function adminsCommand(): Command {
  const admins = new Command('admins').description('manage admin accounts for the web UI');

  addDataDirOption(admins.command('create').description('create an admin (password read from stdin)'))
    .requiredOption('--username <name>', 'login name')
    .requiredOption('--password-stdin', 'read the password from standard input (never from argv)')
    .option('--json', 'print JSON')
    .action(async (options: AdminOptions) => {
      const password = await readPassword();
      const admin = await withStore(options, async (store) => {
        const created = await createAdmin(store.db, options.username!, password).catch((err: { code?: string }) => {
          if (isUniqueViolation(err)) throw new CliError(`an admin named "${options.username}" already exists`);
          throw err;
        });
        await auditCli(store, 'admins.create', { type: 'admin', id: created.id, before: null, after: created });
        return created;
      });
      if (options.json) printJson(admin);
      else process.stdout.write(`Created admin "${admin.username}".\n`);
    });

  addDataDirOption(admins.command('list').description('list admins'))
    .option('--json', 'print JSON')
    .action(async (options: AdminOptions) => {
      const rows = await withStore(options, (store) => listAdmins(store.db), 'reads');
      if (options.json) printJson(rows);
      else printTable(rows, ['id', 'username', 'created_at']);
    });

  addDataDirOption(admins.command('passwd').description("change an admin's password (read from stdin); signs out the admin's sessions").argument('<username>'))
    .requiredOption('--password-stdin', 'read the new password from standard input (never from argv)')
    .option('--json', 'print JSON')
    .action(async (username: string, options: AdminOptions) => {
      const password = await readPassword();
      const { id, signIn } = await withStore(options, async (store) => {
        const signIn = await adminSignIn(store.db, username);
        const changed = await setAdminPassword(store.db, username, password);
        if (changed !== null) await auditCli(store, 'admins.password', { type: 'admin', id: changed, after: { username } });
        return { id: changed, signIn };
      });
      if (signIn === 'sso') throw new CliError(`admin "${username}" signs in with single sign-on and can have no password (delete it with \`tollgate admins delete\` to end its access)`);
      if (id === null) throw new CliError(`no admin named "${username}" (see \`tollgate admins list\`)`);
      if (options.json) printJson({ id, username, password_changed: true });
      else process.stdout.write(`Changed the password of admin "${username}"; their sessions were signed out.\n`);
    });

  addDataDirOption(admins.command('delete').description('delete an admin').argument('<username>'))
    .option('--json', 'print JSON')
    .action(async (username: string, options: AdminOptions) => {
      const deleted = await withStore(options, async (store) => {
        const gone = await deleteAdmin(store.db, username);
        if (gone) await auditCli(store, 'admins.delete', { type: 'admin', id: username, before: { username } });
        return gone;
      });
      if (!deleted) throw new CliError(`no admin named "${username}"`);
      if (options.json) printJson({ username, deleted: true });
      else process.stdout.write(`Deleted admin "${username}".\n`);
    });

  return admins;
}
