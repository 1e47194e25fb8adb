/**
 * The first hour with the real `tollgate` CLI processes: a busy port is one line, `--data-dir` and
 * `--config` work before or after the subcommand, `admins passwd` changes a password and ends the
 * admin's sessions, and the first-start banner lists the providers and says where to change the
 * generated password.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { cliJson, runCli } from '../helpers/cli.ts';
import { startGatewayProcess } from '../helpers/gateway-process.ts';
import { tempDir } from '../helpers/tmp.ts';
import { openTestStore } from '../helpers/test-store.ts';
import { verifyPassword } from '../../core/accounts/passwords.ts';

describe('tollgate serve on a busy port', () => {
  let blocker: Server;
  let port = 0;
  before(async () => {
    blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    port = (blocker.address() as { port: number }).port;
  });
  after(() => new Promise<void>((resolve) => blocker.close(() => resolve())));

  test('exits 1 with one line naming the port and --port, no stack', async () => {
    const result = await runCli(['serve', '--host', '127.0.0.1', '--port', String(port)], { dataDir: tempDir(), env: { TOLLGATE_ADMIN_PASSWORD: 'a long admin password' } });
    assert.equal(result.code, 1);
    const lines = result.stderr.trim().split('\n');
    assert.equal(lines.at(-1), `error: port ${port} is in use; start with --port N`);
    assert.ok(!/^\s+at /m.test(result.stderr), result.stderr);
    assert.ok(!/EADDRINUSE/.test(result.stderr), result.stderr);
  });
});

describe('global options', () => {
  test('--data-dir works before the subcommand as after it', async () => {
    const dir = tempDir();
    const other = tempDir();
    const created = await cliJson(['--data-dir', dir, 'users', 'create', '--name', 'before']);
    assert.equal(created.name, 'before');
    await cliJson(['users', 'create', '--name', 'after', '--data-dir', dir]);
    const names = (list: Array<{ name: string }>) => list.map((u) => u.name);
    assert.deepEqual(names(await cliJson(['users', 'list', '--data-dir', dir])), ['before', 'after']);
    assert.deepEqual(names(await cliJson(['--data-dir', dir, 'users', 'list'])), ['before', 'after']);
    assert.deepEqual(names(await cliJson(['--data-dir', other, 'users', 'list'])), []);
  });

  test('the subcommand\'s own --data-dir wins over the one before it', async () => {
    const dir = tempDir();
    // Flags only (not runCli's dataDir option, which also picks a PostgreSQL database on PostgreSQL runs):
    // this is about which data dir the flags name.
    await cliJson(['users', 'create', '--name', 'mine', '--data-dir', dir]);
    const list = await cliJson<Array<{ name: string }>>(['--data-dir', tempDir(), 'users', 'list', '--data-dir', dir]);
    assert.deepEqual(list.map((u) => u.name), ['mine']);
  });

  test('--config works before the subcommand as after it, and a missing file is one line', async () => {
    const dir = tempDir();
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ plugins: [{ name: 'no-such-plugin' }] }));
    for (const args of [['--config', bad, 'check'], ['check', '--config', bad]]) {
      const result = await runCli(args);
      assert.equal(result.code, 1, args.join(' '));
      assert.match(result.stderr, /no-such-plugin/);
    }
    const missing = await runCli(['--config', join(dir, 'nope.json'), 'check']);
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr.trim(), `error: no manifest at ${join(dir, 'nope.json')} (--config)`);
  });
});

describe('tollgate admins passwd', () => {
  const dataDir = tempDir();
  const hashOf = async (username: string) => {
    const store = await openTestStore(dataDir);
    try {
      return (await store.db.selectFrom('admin_users').select('password_hash').where('username', '=', username).executeTakeFirstOrThrow()).password_hash;
    } finally {
      await store.close();
    }
  };

  test('reads the new password from stdin, stores its scrypt hash and ends the admin\'s sessions', async () => {
    await cliJson(['admins', 'create', '--username', 'root', '--password-stdin'], { dataDir, input: 'the first password\n' });
    const store = await openTestStore(dataDir);
    const adminId = (await store.db.selectFrom('admin_users').select('id').where('username', '=', 'root').executeTakeFirstOrThrow()).id;
    const now = new Date().toISOString();
    await store.db.insertInto('admin_sessions').values({ token_hash: 'h1', admin_user_id: adminId, created_at: now, last_seen_at: now, expires_at: '2999-01-01T00:00:00.000Z', ip: null, user_agent: null }).execute();
    await store.close();

    const result = await runCli(['admins', 'passwd', 'root', '--password-stdin'], { dataDir, input: 'the second password\n' });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Changed the password of admin "root"/);
    assert.ok(await verifyPassword('the second password', await hashOf('root')));
    assert.ok(!(await verifyPassword('the first password', await hashOf('root'))));
    const check = await openTestStore(dataDir);
    const sessions = await check.db.selectFrom('admin_sessions').select('token_hash').where('admin_user_id', '=', adminId).execute();
    await check.close();
    assert.equal(sessions.length, 0);
  });

  test('refuses a short password and an unknown admin with one line and exit 1', async () => {
    const short = await runCli(['admins', 'passwd', 'root', '--password-stdin'], { dataDir, input: 'short' });
    assert.equal(short.code, 1);
    assert.equal(short.stderr.trim(), 'error: the password must be at least 12 characters');
    const unknown = await runCli(['admins', 'passwd', 'nobody', '--password-stdin'], { dataDir, input: 'a long enough password' });
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /^error: no admin named "nobody"/);
  });
});

describe('the first-start banner', () => {
  test('lists the configured providers and who can use each', async () => {
    const keys = { OPENAI_API_KEY: 'sk-banner', ANTHROPIC_API_KEY: '', GEMINI_API_KEY: '', MISTRAL_API_KEY: '', OLLAMA_API_KEY: '', TOLLGATE_ADMIN_PASSWORD: 'a long admin password' };
    const gateway = await startGatewayProcess({ dataDir: tempDir(), env: keys });
    try {
      const line = /^ {2}Providers: +(.*)$/m.exec(gateway.output())?.[1];
      assert.equal(line, "openai (shared key), anthropic (no key: users' own keys only), gemini (no key: users' own keys only), mistral (no key: users' own keys only), ollama (no key needed)");
    } finally {
      assert.equal(await gateway.stop(), 0);
    }
  });

  test('points at the account page and the passwd command to change the generated password', async () => {
    const gateway = await startGatewayProcess({ dataDir: tempDir(), env: { TOLLGATE_ADMIN_PASSWORD: '' } });
    try {
      await new Promise((resolve) => setTimeout(resolve, 200));
      const out = gateway.output();
      assert.match(out, /Created admin "admin" with password \S+ \(shown once\)\./);
      assert.ok(out.includes(`Change it at ${gateway.origin}/admin/#/account or with \`tollgate admins passwd admin --password-stdin\`.`), out);
    } finally {
      assert.equal(await gateway.stop(), 0);
    }
  });
});
