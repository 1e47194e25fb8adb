/**
 * The provider router in the whole in-process gateway: per-user credentials (set by the real CLI, a
 * separate process, as an operator would), the model and provider endpoints, display names, and the
 * persisted catalog serving a restart while the upstream is down.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { openTestStore } from '../helpers/test-store.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { runCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';
import { eventually } from '../helpers/eventually.ts';
import { createGatewayUser } from '../../core/accounts/gateway-users.ts';
import { createApiKey } from '../../core/accounts/api-keys.ts';

let shared: OpenAISimulator;
let own: OpenAISimulator;
let tg: TestGateway;
let otherKey: string;
const dataDir = tempDir();

before(async () => {
  shared = await startOpenAISimulator({ models: ['gpt-4o-mini', 'gpt-4o'] });
  own = await startOpenAISimulator({ models: ['byok-model'] });
  tg = await startTestGateway({
    dataDir,
    providers: {
      openai: { type: 'openai', baseUrl: shared.baseUrl, apiKey: 'sk-shared-gateway-key' },
      byok: { type: 'openai', baseUrl: own.baseUrl },
    },
  });
  const other = await createGatewayUser(tg.gateway.store.db, { name: 'other-user' });
  otherKey = (await createApiKey(tg.gateway.store.db, { gatewayUserId: other.id })).key;
});

after(async () => {
  await tg?.close();
  await shared?.close();
  await own?.close();
});

function get(path: string, key = tg.apiKey) {
  return fetch(`${tg.gateway.origin}${path}`, { headers: { authorization: `Bearer ${key}` } });
}

function chat(model: string, key = tg.apiKey) {
  return fetch(`${tg.gateway.origin}/api/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
}

describe('per-user provider credentials', () => {
  test('a provider without a shared key answers 400 provider_not_configured', async () => {
    const res = await chat('byok/byok-model');
    assert.equal(res.status, 400);
    const { error } = (await res.json()) as { error: { code: string; param: string; message: string } };
    assert.equal(error.code, 'provider_not_configured');
    assert.equal(error.param, 'model');
    assert.match(error.message, /byok/);
  });

  test('a key set with the CLI is used for that user only, and is stored sealed', async () => {
    const set = await runCli(['credentials', 'set', '--user', String(tg.userId), '--provider', 'byok', '--api-key-stdin'], { dataDir, input: 'sk-user-own-key-0123456789\n' });
    assert.equal(set.code, 0, set.stderr);
    assert.doesNotMatch(set.stdout, /sk-user-own-key-0123456789/);
    assert.match(set.stdout, /sk-…6789/);

    await eventually(async () => assert.equal((await chat('byok/byok-model')).status, 200));
    assert.equal(own.requests.at(-1)!.headers.authorization, 'Bearer sk-user-own-key-0123456789');
    assert.equal((await chat('byok/byok-model', otherKey)).status, 400, 'another user still has no credential');

    const store = await openTestStore(dataDir);
    const row = await store.db.selectFrom('provider_credentials').selectAll().where('provider', '=', 'byok').executeTakeFirstOrThrow();
    await store.close();
    assert.ok(Buffer.isBuffer(row.ciphertext), 'sealed bytes come back as a Buffer');
    assert.equal(row.ciphertext.includes(Buffer.from('sk-user-own-key')), false);
    assert.equal(row.nonce.length, 12);
    assert.equal(row.auth_tag.length, 16);
    assert.equal(row.hint, 'sk-…6789');
  });

  test("a user's own key and base URL take precedence over the shared ones", async () => {
    const set = await runCli(
      ['credentials', 'set', '--user', String(tg.userId), '--provider', 'openai', '--api-key-stdin', '--base-url', own.baseUrl],
      { dataDir, input: 'sk-user-openai-key-abcdef' },
    );
    assert.equal(set.code, 0, set.stderr);
    await eventually(async () => {
      const before = own.requests.length;
      assert.equal((await chat('openai/gpt-4o-mini')).status, 200);
      assert.equal(own.requests.length, before + 1, 'went to the user\'s base URL');
    });
    assert.equal(own.requests.at(-1)!.headers.authorization, 'Bearer sk-user-openai-key-abcdef');

    const sharedBefore = shared.requests.length;
    assert.equal((await chat('openai/gpt-4o-mini', otherKey)).status, 200);
    assert.equal(shared.requests.length, sharedBefore + 1);
    assert.equal(shared.requests.at(-1)!.headers.authorization, 'Bearer sk-shared-gateway-key');

    const list = await runCli(['credentials', 'list', '--user', String(tg.userId), '--json'], { dataDir });
    const rows = JSON.parse(list.stdout) as Array<{ provider: string; hint: string; base_url: string | null }>;
    assert.deepEqual(rows.map((r) => [r.provider, r.hint, r.base_url]), [['byok', 'sk-…6789', null], ['openai', 'sk-…cdef', own.baseUrl]]);
    assert.doesNotMatch(list.stdout, /sk-user/);
  });

  test('the running gateway still opens credentials after `tollgate secret rotate`', async () => {
    const rotate = await runCli(['secret', 'rotate', '--json'], { dataDir });
    assert.equal(rotate.code, 0, rotate.stderr);
    assert.equal((JSON.parse(rotate.stdout) as { resealed: number }).resealed, 2);
    await eventually(async () => assert.equal((await chat('byok/byok-model')).status, 200));
    assert.equal(own.requests.at(-1)!.headers.authorization, 'Bearer sk-user-own-key-0123456789');
  });

  test('deleting the credential falls back to the shared key (none here: 400)', async () => {
    const del = await runCli(['credentials', 'delete', '--user', String(tg.userId), '--provider', 'byok'], { dataDir });
    assert.equal(del.code, 0, del.stderr);
    await eventually(async () => assert.equal((await chat('byok/byok-model')).status, 400));
    const again = await runCli(['credentials', 'delete', '--user', String(tg.userId), '--provider', 'byok'], { dataDir });
    assert.equal(again.code, 1);
    assert.match(again.stderr, /has no byok credential/);
  });
});

describe('model and provider endpoints', () => {
  test('GET /api/models lists every provider\'s models with display names', async () => {
    const res = await get('/api/models', otherKey);
    assert.equal(res.status, 200);
    const body = (await res.json()) as { object: string; data: Array<{ id: string; provider: string; model: string; display_name: string }> };
    assert.equal(body.object, 'list');
    assert.deepEqual(
      body.data.map((m) => [m.id, m.provider, m.model, m.display_name]),
      [['openai/gpt-4o-mini', 'openai', 'gpt-4o-mini', 'GPT 4o Mini'], ['openai/gpt-4o', 'openai', 'gpt-4o', 'GPT 4o']],
    );
  });

  test('GET /api/providers/{provider} says whether and how the caller can use it', async () => {
    const res = await get('/api/providers/openai', otherKey);
    assert.equal(res.status, 200);
    const body = (await res.json()) as { id: string; name: string; configured: boolean; credential_source: string | null; models: Array<{ id: string }> };
    assert.deepEqual([body.id, body.name, body.configured, body.credential_source], ['openai', 'OpenAI', true, 'shared']);
    assert.deepEqual(body.models.map((m) => m.id), ['openai/gpt-4o-mini', 'openai/gpt-4o']);

    const byok = (await (await get('/api/providers/byok', otherKey)).json()) as { configured: boolean; credential_source: string | null; models: unknown[] };
    assert.deepEqual([byok.configured, byok.credential_source, byok.models], [false, null, []]);
  });

  test('a user with their own key sees the provider\'s models listed with it', async () => {
    await runCli(['credentials', 'set', '--user', 'other-user', '--provider', 'byok', '--api-key-stdin'], { dataDir, input: 'sk-other-user-key-000000' });
    await eventually(async () => {
      const body = (await (await get('/api/providers/byok', otherKey)).json()) as { credential_source: string | null; models: Array<{ id: string; display_name: string }> };
      assert.equal(body.credential_source, 'user');
      assert.deepEqual(body.models.map((m) => [m.id, m.display_name]), [['byok/byok-model', 'Byok Model']]);
    });
    const list = (await (await get('/api/v1/models', otherKey)).json()) as { data: Array<{ id: string }> };
    assert.deepEqual(list.data.map((m) => m.id), ['openai/gpt-4o-mini', 'openai/gpt-4o', 'byok/byok-model']);
    assert.equal((await chat('byok-model', otherKey)).status, 200, 'a bare id resolves through their own list');
    assert.equal(own.requests.at(-1)!.headers.authorization, 'Bearer sk-other-user-key-000000');
    const mine = (await (await get('/api/v1/models')).json()) as { data: Array<{ id: string }> };
    assert.deepEqual(mine.data.map((m) => m.id), ['openai/gpt-4o-mini', 'openai/gpt-4o'], 'not for a user without that key');
    assert.equal((await chat('byok-model')).status, 404);
  });

  test('an unknown provider is a 404 that lists the known ones; no key is a 401', async () => {
    const res = await get('/api/providers/nope');
    assert.equal(res.status, 404);
    const { error } = (await res.json()) as { error: { code: string; message: string } };
    assert.equal(error.code, 'provider_not_found');
    assert.match(error.message, /openai, byok/);
    assert.equal((await get('/api/providers/openai', 'tg_wrong')).status, 401);
    assert.equal((await get('/api/providers/a/b')).status, 404);
  });
});

describe('the persisted catalog', () => {
  test('a restart with the upstream down still lists models and resolves bare ids', async () => {
    await get('/api/v1/models');
    await tg.close();
    await shared.close();
    tg = await startTestGateway({
      dataDir,
      providers: {
        openai: { type: 'openai', baseUrl: shared.baseUrl, apiKey: 'sk-shared-gateway-key' },
        byok: { type: 'openai', baseUrl: own.baseUrl },
      },
    });
    const list = (await (await get('/api/v1/models')).json()) as { data: Array<{ id: string }> };
    assert.deepEqual(list.data.map((m) => m.id), ['openai/gpt-4o-mini', 'openai/gpt-4o']);
    const res = await chat('gpt-4o');
    const { error } = (await res.json()) as { error: { code: string } };
    assert.equal(res.status, 502, 'resolved to openai, whose upstream is down');
    assert.equal(error.code, 'upstream_unreachable');

    const cli = await runCli(['models', 'list', '--json'], { dataDir });
    assert.deepEqual((JSON.parse(cli.stdout) as Array<{ id: string; display_name: string }>).map((m) => [m.id, m.display_name]), [
      ['openai/gpt-4o-mini', 'GPT 4o Mini'], ['openai/gpt-4o', 'GPT 4o'],
    ]);
  });
});
