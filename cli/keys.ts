/** `tollgate keys create|list|revoke|tag` */
import { Command } from 'commander';
import { createApiKey, listApiKeys, parseModelPatterns, revokeApiKey, setApiKeyTags } from '../core/accounts/api-keys.ts';
import { checkKeyTags, parseTagArgument, type KeyTags } from '../core/accounts/key-tags.ts';
import { GatewayError } from '../core/errors.ts';
import { addDataDirOption, parsePositiveInt, requireUser, withStore } from './context.ts';
import { auditCli } from './audit-row.ts';
import { CliError, printJson, printTable } from './output.ts';

interface KeyOptions {
  user?: string;
  name?: string;
  expires?: string;
  rpm?: number;
  tpm?: number;
  models?: string[] | null;
  tag?: string[];
  clear?: boolean;
  json?: boolean;
  dataDir?: string;
}

function parseExpiry(value: string): string {
  const ms = Date.parse(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(ms)) throw new CliError(`--expires must be an ISO-8601 date or time, got "${value}"`);
  return new Date(ms).toISOString();
}

/** `name=value` arguments as checked tags (a repeated name keeps the last value); a bad one is a CliError. */
function tagsOf(args: readonly string[]): KeyTags | null {
  if (args.length === 0) return null;
  try {
    return checkKeyTags(Object.fromEntries(args.map((a) => parseTagArgument(a, '--tag'))), '--tag');
  } catch (err) {
    if (err instanceof GatewayError) throw new CliError(err.message);
    throw err;
  }
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** Tags as a table cell: `project=search,cost-center=42`. */
const tagsCell = (tags: KeyTags | null) => (tags ? Object.entries(tags).map(([n, v]) => `${n}=${v}`).join(',') : '');

export function keysCommand(): Command {
  const keys = new Command('keys').description('manage gateway API keys');

  addDataDirOption(keys.command('create').description('create an API key (printed once; only its hash is stored)'))
    .requiredOption('--user <id|name>', 'the gateway user who owns the key')
    .option('--name <label>', 'a label to recognise the key by')
    .option('--expires <iso-8601>', 'expiry time, e.g. 2027-01-01 or 2027-01-01T12:00:00Z', parseExpiry)
    .option('--rpm <n>', 'requests per minute for this key, on top of the user\'s limit', parsePositiveInt('--rpm'))
    .option('--tpm <n>', 'tokens per minute for this key, on top of the user\'s limit', parsePositiveInt('--tpm'))
    .option('--models <patterns>', 'comma-separated models or groups the key may call, * matching anything (e.g. \'openai/*,claude-*\'); default all', parseModelPatterns)
    .option('--tag <name=value>', 'a tag copied onto every log row of the key, e.g. project=search (repeat for more)', collect)
    .option('--json', 'print JSON')
    .action(async (options: KeyOptions) => {
      const tags = tagsOf(options.tag ?? []);
      const created = await withStore(options, async (store) => {
        const user = await requireUser(store, options.user!);
        const made = await createApiKey(store.db, { gatewayUserId: user.id, name: options.name ?? null, expiresAt: options.expires ?? null, rpm: options.rpm ?? null, tpm: options.tpm ?? null, models: options.models ?? null, tags });
        // The key in clear stays out of the row (redacted by name, and left out here besides).
        const { key: _key, ...view } = made;
        await auditCli(store, 'keys.create', { type: 'key', id: made.id, before: null, after: view });
        return made;
      });
      if (options.json) {
        printJson({ id: created.id, key: created.key, user_id: created.gateway_user_id, name: created.name, key_prefix: created.key_prefix, expires_at: created.expires_at, created_at: created.created_at, models: created.models, tags: created.tags });
        return;
      }
      process.stdout.write(`Created key ${created.id} for user ${created.gateway_user_id}. It is shown only now; store it safely:\n\n  ${created.key}\n\n`);
    });

  addDataDirOption(keys.command('list').description('list API keys (never the keys themselves)'))
    .option('--user <id|name>', 'only this user\'s keys')
    .option('--json', 'print JSON')
    .action(async (options: KeyOptions) => {
      const rows = await withStore(options, async (store) => {
        const userId = options.user === undefined ? undefined : (await requireUser(store, options.user)).id;
        return listApiKeys(store.db, userId);
      }, 'reads');
      if (options.json) printJson(rows.map(({ gateway_user_id, ...rest }) => ({ ...rest, user_id: gateway_user_id })));
      else printTable(rows.map((r) => Object.assign({}, r, { tags: tagsCell(r.tags) })), ['id', 'gateway_user_id', 'name', 'key_prefix', 'status', 'tags', 'created_at', 'last_used_at', 'expires_at']);
    });

  addDataDirOption(keys.command('revoke').description('revoke an API key now').argument('<key-id>', 'the key\'s id (see `tollgate keys list`)', parsePositiveInt('KEY_ID')))
    .option('--json', 'print JSON')
    .action(async (id: number, options: KeyOptions) => {
      const found = await withStore(options, async (store) => {
        const revoked = await revokeApiKey(store.db, id);
        if (revoked) await auditCli(store, 'keys.revoke', { type: 'key', id });
        return revoked;
      });
      if (!found) throw new CliError(`no API key with id ${id}`);
      if (options.json) printJson({ id, revoked: true });
      else process.stdout.write(`Revoked key ${id}. Requests with it are refused within a second.\n`);
    });

  addDataDirOption(keys.command('tag').description('replace an API key\'s tags (its later requests carry them; logged rows keep theirs)')
    .argument('<key-id>', 'the key\'s id (see `tollgate keys list`)', parsePositiveInt('KEY_ID'))
    .argument('[tags...]', 'name=value pairs, e.g. project=search cost-center=42'))
    .option('--clear', 'remove every tag')
    .option('--json', 'print JSON')
    .action(async (id: number, args: string[], options: KeyOptions) => {
      if (args.length === 0 && !options.clear) throw new CliError('give the tags as name=value, or --clear to remove them');
      if (args.length > 0 && options.clear) throw new CliError('give either tags or --clear, not both');
      const tags = tagsOf(args);
      const found = await withStore(options, (store) => setApiKeyTags(store.db, id, tags));
      if (!found) throw new CliError(`no API key with id ${id}`);
      if (options.json) printJson({ id, tags });
      else process.stdout.write(tags ? `Key ${id} is now tagged ${tagsCell(tags)}.\n` : `Key ${id} has no tags now.\n`);
    });

  return keys;
}
