/** `tollgate credentials set|list|delete`: a gateway user's own provider keys (sealed at rest). */
import { Command } from 'commander';
import { deleteProviderCredential, listProviderCredentials, setProviderCredential } from '../core/accounts/provider-credentials.ts';
import { loadKeyring, resolveDataDir } from '../core/store/data-dir.ts';
import { addDataDirOption, requireUser, withStore } from './context.ts';
import { CliError, printJson, printTable, readStdin } from './output.ts';

interface CredentialOptions {
  user?: string;
  provider?: string;
  apiKeyStdin?: boolean;
  baseUrl?: string;
  json?: boolean;
  dataDir?: string;
}

function parseProviderId(value: string): string {
  if (!/^[a-z0-9][a-z0-9_-]*$/.test(value)) throw new CliError(`--provider must be a provider id such as "openai" or "anthropic", got "${value}"`);
  return value;
}

function parseBaseUrl(value: string): string {
  if (!/^https?:\/\//.test(value) || !URL.canParse(value)) throw new CliError(`--base-url must be an http(s) URL, got "${value}"`);
  return value;
}

export function credentialsCommand(): Command {
  const credentials = new Command('credentials').description("manage a gateway user's own provider credentials (encrypted at rest)");

  addDataDirOption(credentials.command('set').description("store or replace a user's key for a provider (read from stdin, never argv)"))
    .requiredOption('--user <id|name>', 'the gateway user')
    .requiredOption('--provider <id>', 'provider id as in the manifest, e.g. anthropic', parseProviderId)
    .requiredOption('--api-key-stdin', 'read the provider API key from standard input')
    .option('--base-url <url>', "use this base URL for the user's requests instead of the provider's", parseBaseUrl)
    .option('--json', 'print JSON')
    .action(async (options: CredentialOptions) => {
      const apiKey = (await readStdin()).trim();
      if (!apiKey) throw new CliError('no API key on standard input');
      const keyring = loadKeyring(resolveDataDir(options.dataDir));
      const view = await withStore(options, async (store) => {
        const user = await requireUser(store, options.user!);
        return setProviderCredential(store.db, keyring, { gatewayUserId: user.id, provider: options.provider!, apiKey, baseUrl: options.baseUrl ?? null });
      });
      if (options.json) printJson(view);
      else process.stdout.write(`Stored the ${view.provider} key ${view.hint} for user ${view.gateway_user_id}. It is used for that user's ${view.provider}/... requests from now on.\n`);
    });

  addDataDirOption(credentials.command('list').description("list a user's provider credentials (masked)"))
    .requiredOption('--user <id|name>', 'the gateway user')
    .option('--json', 'print JSON')
    .action(async (options: CredentialOptions) => {
      const rows = await withStore(options, async (store) => listProviderCredentials(store.db, (await requireUser(store, options.user!)).id), 'reads');
      if (options.json) printJson(rows);
      else printTable(rows, ['provider', 'hint', 'base_url', 'updated_at']);
    });

  addDataDirOption(credentials.command('delete').description("delete a user's credential for a provider"))
    .requiredOption('--user <id|name>', 'the gateway user')
    .requiredOption('--provider <id>', 'provider id', parseProviderId)
    .option('--json', 'print JSON')
    .action(async (options: CredentialOptions) => {
      const deleted = await withStore(options, async (store) => deleteProviderCredential(store.db, (await requireUser(store, options.user!)).id, options.provider!));
      if (!deleted) throw new CliError(`user "${options.user}" has no ${options.provider} credential`);
      if (options.json) printJson({ provider: options.provider, deleted: true });
      else process.stdout.write(`Deleted the ${options.provider} credential; that user's requests now use the shared key, if any.\n`);
    });

  return credentials;
}
