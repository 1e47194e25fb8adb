/** `tollgate credentials set|list|delete`: a gateway user's own provider keys (sealed at rest). */
import { Command } from 'commander';
import { deleteProviderCredential, listProviderCredentials, setProviderCredential } from '../core/accounts/provider-credentials.ts';
import { deleteUsageReportCredential, listUsageReportCredentials, setUsageReportCredential } from '../core/accounts/usage-report-credentials.ts';
import { REPORT_KINDS } from '../core/reconcile/report-sources.ts';
import { loadKeyring, resolveDataDir } from '../core/store/data-dir.ts';
import { addDataDirOption, requireUser, withStore } from './context.ts';
import { auditCli } from './audit-row.ts';
import { CliError, printJson, printTable, readStdin } from './output.ts';

interface CredentialOptions {
  user?: string;
  provider?: string;
  apiKeyStdin?: boolean;
  baseUrl?: string;
  json?: boolean;
  dataDir?: string;
  kind?: string;
  adminKeyStdin?: boolean;
  gatewayKeyIds?: string;
  keyMap?: Record<string, string>;
}

/**
 * `--key-map key_abc=…a1b2,key_def=#1f2e3d4c`: the provider's own key ids (its usage report's
 * `api_key_id`) to the fingerprints Tollgate logs for its credentials (`upstream_key`, shown by
 * `GET /admin/api/upstream-health`).
 */
function parseKeyMap(value: string): Record<string, string> {
  const map: Record<string, string> = {};
  for (const pair of value.split(',').map((p) => p.trim()).filter(Boolean)) {
    const equals = pair.indexOf('=');
    const id = pair.slice(0, equals).trim();
    const fingerprint = pair.slice(equals + 1).trim();
    if (equals <= 0 || !fingerprint) throw new CliError(`--key-map takes PROVIDER_KEY_ID=FINGERPRINT pairs separated by commas (e.g. key_abc=…a1b2), got "${pair}"`);
    map[id] = fingerprint;
  }
  return map;
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
        const set = await setProviderCredential(store.db, keyring, { gatewayUserId: user.id, provider: options.provider!, apiKey, baseUrl: options.baseUrl ?? null });
        await auditCli(store, 'credentials.set', { type: 'credential', id: `${user.id}/${set.provider}`, after: { provider: set.provider, hint: set.hint, base_url: set.base_url } });
        return set;
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
      const deleted = await withStore(options, async (store) => {
        const user = await requireUser(store, options.user!);
        const gone = await deleteProviderCredential(store.db, user.id, options.provider!);
        if (gone) await auditCli(store, 'credentials.delete', { type: 'credential', id: `${user.id}/${options.provider!}` });
        return gone;
      });
      if (!deleted) throw new CliError(`user "${options.user}" has no ${options.provider} credential`);
      if (options.json) printJson({ provider: options.provider, deleted: true });
      else process.stdout.write(`Deleted the ${options.provider} credential; that user's requests now use the shared key, if any.\n`);
    });

  addAdminCommands(credentials);
  return credentials;
}

/**
 * `credentials set-admin|list-admin|delete-admin`: the admin ("usage report") credential per provider
 * that `tollgate reconcile` reads the provider's usage and cost reports with (sealed at rest).
 */
function addAdminCommands(credentials: Command): void {
  addDataDirOption(credentials.command('set-admin').description("store or replace a provider's admin key for its usage and cost reports (read from stdin, never argv)"))
    .requiredOption('--provider <id>', 'provider id as in the manifest, e.g. openai', parseProviderId)
    .option('--kind <kind>', `the report API: ${REPORT_KINDS.join(' | ')} (default: the provider id)`)
    .requiredOption('--admin-key-stdin', 'read the admin key (sk-admin-..., sk-ant-admin...) from standard input')
    .option('--base-url <url>', "the report API's base URL (OpenAI: https://api.openai.com/v1, Anthropic: https://api.anthropic.com)", parseBaseUrl)
    .option('--gateway-key-ids <ids>', "comma-separated provider-side ids of the keys Tollgate uses (usage on any other key is named as used outside Tollgate)")
    .option('--key-map <pairs>', "provider key id=Tollgate credential fingerprint pairs, comma-separated (key_abc=…a1b2): reconciliation then compares each of those keys with the log's requests on it", parseKeyMap)
    .option('--json', 'print JSON')
    .action(async (options: CredentialOptions) => {
      const kind = options.kind ?? options.provider!;
      if (!REPORT_KINDS.includes(kind)) throw new CliError(`--kind must be one of ${REPORT_KINDS.join(', ')}, got "${kind}"`);
      const adminKey = (await readStdin()).trim();
      if (!adminKey) throw new CliError('no admin key on standard input');
      const gatewayKeyIds = options.gatewayKeyIds ? options.gatewayKeyIds.split(',').map((id) => id.trim()).filter(Boolean) : null;
      const keyring = loadKeyring(resolveDataDir(options.dataDir));
      const view = await withStore(options, (store) => setUsageReportCredential(store.db, keyring, {
        provider: options.provider!, kind, adminKey, baseUrl: options.baseUrl ?? null, gatewayKeyIds, keyMap: options.keyMap ?? null,
      }));
      if (options.json) printJson(view);
      else process.stdout.write(`Stored the ${view.provider} admin key ${view.hint} (${view.kind} reports). \`tollgate reconcile\` and the daily run use it from now on.\n`);
    });

  addDataDirOption(credentials.command('list-admin').description('list the stored admin credentials (masked)'))
    .option('--json', 'print JSON')
    .action(async (options: CredentialOptions) => {
      const rows = await withStore(options, (store) => listUsageReportCredentials(store.db), 'reads');
      if (options.json) printJson(rows);
      else printTable(rows.map((r) => ({ ...r, gateway_key_ids: r.gateway_key_ids?.join(',') ?? null,
        key_map: r.key_map ? Object.entries(r.key_map).map(([id, fingerprint]) => `${id}=${fingerprint}`).join(',') : null })),
      ['provider', 'kind', 'hint', 'base_url', 'gateway_key_ids', 'key_map', 'updated_at']);
    });

  addDataDirOption(credentials.command('delete-admin').description("delete a provider's admin credential"))
    .requiredOption('--provider <id>', 'provider id', parseProviderId)
    .option('--json', 'print JSON')
    .action(async (options: CredentialOptions) => {
      const deleted = await withStore(options, (store) => deleteUsageReportCredential(store.db, options.provider!));
      if (!deleted) throw new CliError(`no admin credential for ${options.provider}`);
      if (options.json) printJson({ provider: options.provider, deleted: true });
      else process.stdout.write(`Deleted the ${options.provider} admin credential.\n`);
    });
}
