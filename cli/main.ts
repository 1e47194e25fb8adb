/**
 * The `tollgate` command line (commander). One file per command group. The CLI knows no plugin: the
 * composition root (`tollgate.ts`) passes the plugin registry, which commands use to validate the
 * manifest, start the gateway or boot one plugin for its services.
 */
import { Command } from 'commander';
import { serveCommand } from './serve.ts';
import { checkCommand } from './check.ts';
import { usersCommand } from './users.ts';
import { teamsCommand } from './teams.ts';
import { ledgerCommand } from './ledger.ts';
import { keysCommand } from './keys.ts';
import { adminsCommand } from './admins.ts';
import { credentialsCommand } from './credentials.ts';
import { secretCommand } from './secret.ts';
import { modelsCommand } from './models.ts';
import { pricingCommand } from './pricing.ts';
import { exportSqliteCommand, migrateCommand } from './store.ts';
import { pluginsCommand } from './plugins.ts';
import { reconcileCommand } from './reconcile.ts';
import { auditCommand } from './audit.ts';
import { CliError } from './output.ts';
import { addGlobalOptions } from './global-options.ts';
import { ManifestError, type PluginRegistry } from '../core/manifest.ts';

/** The gateway's version, as `--version` and `tollgate plugins list` show it. */
const GATEWAY_VERSION = '0.1.0';

/** The whole program, its commands given `registry`. */
export function createProgram(registry: PluginRegistry): Command {
  return addGlobalOptions(new Command('tollgate'))
    .description('Tollgate: a self-hosted, OpenAI-compatible LLM gateway')
    .version(GATEWAY_VERSION)
    .showHelpAfterError()
    .addCommand(serveCommand(registry))
    .addCommand(checkCommand(registry))
    .addCommand(usersCommand())
    .addCommand(teamsCommand())
    .addCommand(ledgerCommand())
    .addCommand(keysCommand())
    .addCommand(adminsCommand())
    .addCommand(credentialsCommand())
    .addCommand(secretCommand())
    .addCommand(modelsCommand(registry))
    .addCommand(pricingCommand(registry))
    .addCommand(pluginsCommand(registry, GATEWAY_VERSION))
    .addCommand(reconcileCommand(registry))
    .addCommand(auditCommand())
    .addCommand(migrateCommand())
    .addCommand(exportSqliteCommand());
}

/**
 * Runs the command in `argv` (node's `process.argv` shape) and exits 1 with `error: …` on stderr for
 * a user's mistake (`CliError`, `ManifestError`), with the stack for anything else.
 */
export async function runCli(registry: PluginRegistry, argv: readonly string[] = process.argv): Promise<void> {
  // `tollgate pricing list | head` closes the pipe early; that is the reader's choice, not an error.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });

  try {
    await createProgram(registry).parseAsync(argv);
  } catch (err) {
    if (err instanceof CliError || err instanceof ManifestError) {
      process.stderr.write(`error: ${err.message}\n`);
      process.exit(1);
    }
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  }
}
