/** The real `tollgate` CLI against a real data dir: users, keys, admins, check, --json and errors. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openTestStore, TEST_STORE_ENGINE } from '../helpers/test-store.ts';
import { cliJson, runCli, runCliTogether } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';
import { hashApiKey } from '../../core/accounts/api-keys.ts';
import { loadMasterKey } from '../../core/store/data-dir.ts';

const dataDir = tempDir();

describe('tollgate users', () => {
  test('create, show, update, list and delete a user, with --json', async () => {
    const created = await cliJson<Record<string, unknown>>(['users', 'create', '--name', 'ada', '--email', 'ada@example.com', '--budget', '5', '--budget-period', 'weekly', '--rpm', '60'], { dataDir });
    assert.equal(created.name, 'ada');
    assert.equal(created.budget_limit_usd, 5);
    assert.equal(created.budget_period, 'weekly');
    assert.equal(created.rpm, 60);
    assert.equal(created.disabled, false);
    const id = String(created.id);

    assert.deepEqual(await cliJson(['users', 'show', 'ada'], { dataDir }), created);
    const updated = await cliJson<Record<string, unknown>>(['users', 'update', id, '--budget', 'none', '--disabled', 'true', '--tpm', '1000'], { dataDir });
    assert.equal(updated.budget_limit_usd, null);
    assert.equal(updated.disabled, true);
    assert.equal(updated.tpm, 1000);

    const list = await cliJson<Array<{ name: string }>>(['users', 'list'], { dataDir });
    assert.deepEqual(list.map((u) => u.name), ['ada']);
    const human = await runCli(['users', 'list'], { dataDir });
    assert.match(human.stdout, /^ID\s+NAME\s+EMAIL/);
    assert.match(human.stdout, /ada@example\.com/);

    assert.equal(updated.max_concurrent, null);
    const capped = await cliJson<Record<string, unknown>>(['users', 'update', id, '--max-concurrent', '8'], { dataDir });
    assert.equal(capped.max_concurrent, 8);

    assert.equal(updated.budget_alert_thresholds, null);
    const alerting = await cliJson<Record<string, unknown>>(['users', 'update', id, '--alert-thresholds', '90,50,90'], { dataDir });
    assert.deepEqual(alerting.budget_alert_thresholds, [50, 90]);
    assert.deepEqual((await cliJson<Record<string, unknown>>(['users', 'update', id, '--alert-thresholds', 'none'], { dataDir })).budget_alert_thresholds, []);
    assert.equal((await cliJson<Record<string, unknown>>(['users', 'update', id, '--alert-thresholds', 'default'], { dataDir })).budget_alert_thresholds, null);
    const badThresholds = await runCli(['users', 'update', id, '--alert-thresholds', '80,0'], { dataDir });
    assert.equal(badThresholds.code, 1);
    assert.equal(badThresholds.stderr, 'error: --alert-thresholds must hold whole percents from 1 to 1000 (got 0), or "none" or "default"\n');

    assert.deepEqual(await cliJson(['users', 'delete', 'ada'], { dataDir }), { id: Number(id), deleted: true });
    assert.deepEqual(await cliJson(['users', 'list'], { dataDir }), []);
  });

  test('refuses a duplicate name, bad numbers and an unknown user with a clear message and exit 1', async () => {
    await cliJson(['users', 'create', '--name', 'dup'], { dataDir });
    const dup = await runCli(['users', 'create', '--name', 'dup'], { dataDir });
    assert.equal(dup.code, 1);
    assert.equal(dup.stderr, 'error: a gateway user named "dup" already exists\n');
    const badBudget = await runCli(['users', 'create', '--name', 'x', '--budget', 'lots'], { dataDir });
    assert.equal(badBudget.code, 1);
    assert.match(badBudget.stderr, /--budget must be a non-negative number of USD, got "lots"/);
    const badPeriod = await runCli(['users', 'create', '--name', 'x', '--budget-period', 'hourly'], { dataDir });
    assert.notEqual(badPeriod.code, 0);
    assert.match(badPeriod.stderr, /Allowed choices are daily, weekly, monthly, never/);
    const missing = await runCli(['users', 'show', 'nobody'], { dataDir });
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no gateway user "nobody"/);
  });
});

describe('tollgate keys', () => {
  test('create prints the key once; only its SHA-256 and prefix are stored; revoke marks it', async () => {
    const user = await cliJson<{ id: number }>(['users', 'create', '--name', 'keyholder'], { dataDir });
    const created = await cliJson<{ id: number; key: string; user_id: number; key_prefix: string }>(['keys', 'create', '--user', 'keyholder', '--name', 'laptop', '--expires', '2030-01-01', '--rpm', '30', '--tpm', '40000', '--models', 'openai/*, claude-*'], { dataDir });
    assert.equal(created.user_id, user.id);
    assert.match(created.key, /^tg_[A-Za-z0-9_-]{43}$/);
    assert.equal(created.key_prefix, created.key.slice(0, 11));

    const store = await openTestStore(dataDir);
    const row = await store.db.selectFrom('api_keys').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow() as Record<string, unknown>;
    await store.close();
    assert.equal(row.key_hash, hashApiKey(created.key));
    assert.equal(row.expires_at, '2030-01-01T00:00:00.000Z');
    assert.deepEqual([row.rpm, row.tpm], [30, 40000]);
    assert.equal(row.models, '["openai/*","claude-*"]', 'the allow-list, as a JSON array of patterns');
    assert.ok(!Object.values(row).includes(created.key), 'the key itself is not stored');

    const listed = await cliJson<Array<Record<string, unknown>>>(['keys', 'list', '--user', 'keyholder'], { dataDir });
    assert.equal(listed.length, 1);
    assert.equal(listed[0]!.status, 'active');
    assert.equal(listed[0]!.name, 'laptop');
    assert.deepEqual(listed[0]!.models, ['openai/*', 'claude-*']);
    assert.ok(!JSON.stringify(listed).includes(created.key) && !('key_hash' in listed[0]!));

    assert.deepEqual(await cliJson(['keys', 'revoke', String(created.id)], { dataDir }), { id: created.id, revoked: true });
    const after = await cliJson<Array<{ id: number; status: string }>>(['keys', 'list'], { dataDir });
    assert.equal(after.find((k) => k.id === created.id)!.status, 'revoked');
    const unknown = await runCli(['keys', 'revoke', '999'], { dataDir });
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no API key with id 999/);
  });

  test('human output shows the key once with a warning', async () => {
    await cliJson(['users', 'create', '--name', 'human'], { dataDir });
    const out = await runCli(['keys', 'create', '--user', 'human'], { dataDir });
    assert.equal(out.code, 0);
    assert.match(out.stdout, /shown only now/);
    assert.match(out.stdout, /\n {2}tg_[A-Za-z0-9_-]{43}\n/);
  });
});

describe('tollgate admins', () => {
  test('create reads the password from stdin and stores a scrypt hash', async () => {
    const admin = await cliJson<{ username: string }>(['admins', 'create', '--username', 'ops', '--password-stdin'], { dataDir, input: 'a long enough password\n' });
    assert.equal(admin.username, 'ops');
    const store = await openTestStore(dataDir);
    const { password_hash: hash } = await store.db.selectFrom('admin_users').select('password_hash').where('username', '=', 'ops').executeTakeFirstOrThrow();
    await store.close();
    assert.match(hash, /^scrypt\$131072\$8\$1\$/);
    assert.ok(!hash.includes('a long enough password'));
    const short = await runCli(['admins', 'create', '--username', 'weak', '--password-stdin'], { dataDir, input: 'short' });
    assert.equal(short.code, 1);
    assert.match(short.stderr, /at least 12 characters/);
    assert.deepEqual((await cliJson<Array<{ username: string }>>(['admins', 'list'], { dataDir })).map((a) => a.username), ['ops']);
    assert.deepEqual(await cliJson(['admins', 'delete', 'ops'], { dataDir }), { username: 'ops', deleted: true });
  });
});

describe('tollgate check', () => {
  test('accepts the default manifest and lists every problem of a bad one with exit 1', async () => {
    const ok = await runCli(['check']);
    assert.equal(ok.code, 0);
    assert.match(ok.stdout, /built-in default manifest: OK \(plugins: auth-guard → logger → metrics → response-store → rate-limit → budget → pricing → account → provider-router\)/);
    const path = join(tempDir(), 'bad.json');
    writeFileSync(path, JSON.stringify({ server: { port: -1 }, plugins: [{ name: 'nope' }, { name: 'provider-router' }] }));
    const bad = await runCli(['check', '--config', path]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /2 problems/);
    assert.match(bad.stderr, /\/server\/port: must be >= 0/);
    assert.match(bad.stderr, /\/plugins\/0\/name: unknown plugin "nope"/);
  });

  test('fails for a model group naming a provider that is not configured, naming the group and the provider', async () => {
    const path = join(tempDir(), 'groups.json');
    const router = {
      name: 'provider-router',
      config: {
        providers: { openai: { type: 'openai', baseUrl: 'https://api.openai.com/v1' } },
        models: { fast: { strategy: 'fallback', deployments: [{ provider: 'openai', model: 'gpt-4o-mini' }, { provider: 'groq', model: 'llama-3.1-8b' }] } },
      },
    };
    writeFileSync(path, JSON.stringify({ plugins: [{ name: 'auth-guard' }, router] }));
    const result = await runCli(['check', '--config', path]);
    assert.equal(result.code, 1, result.stdout);
    assert.equal(result.stderr, `${path}: 1 problem\n  /plugins/1/config/models/fast/deployments/1/provider: model group "fast" names provider "groq", which is not configured (providers: openai)\n`);
  });

  test('takes --data-dir after the command, as every command does', async () => {
    const ok = await runCli(['check', '--data-dir', tempDir()]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /built-in default manifest: OK/);
  });
});

describe('data dir', () => {
  test('the first command creates tollgate.db; the master key is created once with mode 0600', async () => {
    const dir = tempDir();
    await cliJson(['users', 'list'], { dataDir: dir });
    // On PostgreSQL runs the database is the server's; the master key still lives in the data dir.
    if (TEST_STORE_ENGINE === 'sqlite') assert.ok(existsSync(join(dir, 'tollgate.db')));
    const { key, created } = loadMasterKey(dir, {});
    assert.equal(created, true);
    assert.equal(key.length, 32);
    assert.equal(statSync(join(dir, 'secret.key')).mode & 0o777, 0o600);
    assert.deepEqual(loadMasterKey(dir, {}).key, key, 'the same key is read back');
    assert.throws(() => loadMasterKey(dir, { TOLLGATE_SECRET: 'dG9vIHNob3J0' }), /exactly 32 bytes/);
  });

  test('several commands started at once on a fresh data dir all succeed (each migrates it, once)', async () => {
    // The bundle when it is fresh (`npm test` builds it): it loads fast, so the processes released
    // together also reach the migration together, which is what broke ("table gateway_users already
    // exists" in about half the trials before migrations took the write lock first).
    const env = { TOLLGATE_FROM_SOURCE: '0' };
    for (let trial = 0; trial < 5; trial++) {
      const dir = tempDir();
      const names = ['a', 'b', 'c', 'd', 'e'].map((n) => `${n}${trial}`);
      const results = await runCliTogether(names.map((name) => ['users', 'create', '--name', name]), { dataDir: dir, env });
      for (const result of results) assert.equal(result.code, 0, `trial ${trial}: ${result.stderr}`);
      const listed = await cliJson<Array<{ name: string }>>(['users', 'list'], { dataDir: dir, env });
      assert.deepEqual(listed.map((u) => u.name).sort(), names);
    }
  });
});
