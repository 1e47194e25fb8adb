/**
 * `tollgate secret rotate`: re-encrypts every stored credential under a new master key.
 * File-based key: a new key is written to `secret.key.next`, every record is re-sealed in one
 * transaction, then the new key replaces `secret.key`. A crash in between is safe (both keys open)
 * and running `rotate` again resumes. With `TOLLGATE_SECRET`: set the new key there and the old one in
 * `TOLLGATE_SECRET_PREVIOUS`, run `rotate`, then drop `TOLLGATE_SECRET_PREVIOUS`.
 */
import { Command } from 'commander';
import { commitNextKey, loadKeyring, prepareNextKey, resolveDataDir } from '../core/store/data-dir.ts';
import { createKeyring } from '../core/accounts/secret-box.ts';
import { resealAll } from '../core/accounts/provider-credentials.ts';
import { addDataDirOption, withStore } from './context.ts';
import { printJson } from './output.ts';

export function secretCommand(): Command {
  const secret = new Command('secret').description('manage the master key that encrypts provider credentials');

  addDataDirOption(secret.command('rotate').description('re-encrypt every stored credential under a new master key'))
    .option('--json', 'print JSON')
    .action(async (options: { dataDir?: string; json?: boolean }) => {
      const dataDir = resolveDataDir(options.dataDir);
      const fromEnv = Boolean(process.env.TOLLGATE_SECRET);
      const current = loadKeyring(dataDir);
      const next = fromEnv ? current : createKeyring(prepareNextKey(dataDir), [...current.all.values()]);
      const count = await withStore(options, async (store) => resealAll(store.db, next, next));
      if (!fromEnv) commitNextKey(dataDir);
      const result = { key_id: next.current.id, resealed: count, source: fromEnv ? 'TOLLGATE_SECRET' : 'secret.key' };
      if (options.json) printJson(result);
      else process.stdout.write(`Re-encrypted ${count} credential(s) under master key ${result.key_id} (${result.source}). Running gateways pick it up by themselves.\n`);
    });

  return secret;
}
