/** The `tollgate` command line (commander). One file per command group. */
import { Command } from 'commander';
import { serveCommand } from './serve.ts';
import { checkCommand } from './check.ts';
import { usersCommand } from './users.ts';
import { keysCommand } from './keys.ts';
import { adminsCommand } from './admins.ts';
import { credentialsCommand } from './credentials.ts';
import { secretCommand } from './secret.ts';
import { modelsCommand } from './models.ts';
import { pricingCommand } from './pricing.ts';
import { CliError } from './output.ts';
import { ManifestError } from '../core/manifest.ts';

const program = new Command('tollgate')
  .description('Tollgate: a self-hosted, OpenAI-compatible LLM gateway')
  .version('0.1.0')
  .showHelpAfterError()
  .addCommand(serveCommand())
  .addCommand(checkCommand())
  .addCommand(usersCommand())
  .addCommand(keysCommand())
  .addCommand(adminsCommand())
  .addCommand(credentialsCommand())
  .addCommand(secretCommand())
  .addCommand(modelsCommand())
  .addCommand(pricingCommand());

// `tollgate pricing list | head` closes the pipe early; that is the reader's choice, not an error.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CliError || err instanceof ManifestError) {
    process.stderr.write(`error: ${err.message}\n`);
    process.exit(1);
  }
  process.stderr.write(`${(err as Error).stack ?? err}\n`);
  process.exit(1);
}
