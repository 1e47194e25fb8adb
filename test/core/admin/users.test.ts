/**
 * `/admin/api/users`: list with search, sort and paging, create, read, edit, delete. Users carry their
 * live budget, key count and last use; edits reach the running pipeline at once (a lowered budget
 * refuses the next request, a disabled user is refused), and deleting a user keeps its request history.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startTestGateway, manualClock, type TestGateway } from '../../helpers/test-gateway.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../../helpers/openai-simulator.ts';
import { dataDirWithPrices } from '../../helpers/prices.ts';
import { loginAdmin, type AdminClient, assertError } from '../../helpers/admin-client.ts';

const NOW_MS = Date.parse('2026-11-20T10:00:00.000Z');
const EVIL = { origin: 'http://evil.example' };
const NO_SESSION = { cookie: null };
const messages = [{ role: 'user' as const, content: 'Say hello.' }];
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
/** What one simulator answer costs at the test prices: 16 × 0.15 + 3 × 0.075 + 24 × 0.6 micro-USD. */
const SIM_COST_NANOS = 17_025;

let sim: OpenAISimulator;
let tg: TestGateway;
let admin: AdminClient;

before(async () => {
  sim = await startOpenAISimulator();
  const dataDir = await dataDirWithPrices([{ model: 'gpt-4o-mini', provider: 'openai', input: 0.15, output: 0.6, cachedInput: 0.075 }]);
  tg = await startTestGateway({
    dataDir,
    clock: manualClock(NOW_MS),
    providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-shared' } },
    config: { 'auth-guard': { lastUsedFlushMs: 100 } },
    user: { budgetUsd: 5, budgetPeriod: 'monthly' },
  });
  admin = await loginAdmin(tg.gateway.origin);
});

after(async () => {
  await tg?.close();
  await sim?.close();
});

async function createUser(body: Record<string, unknown>): Promise<any> {
  const res = await admin.post('/admin/api/users', body);
  assert.equal(res.status, 201, res.text);
  return res.body;
}

/** An SDK client with a fresh key of `userId`, made through the admin API. */
async function clientFor(userId: number): Promise<OpenAI> {
  const res = await admin.post(`/admin/api/users/${userId}/keys`, { name: 'sdk' });
  assert.equal(res.status, 201, res.text);
  return new OpenAI({ apiKey: res.body.key, baseURL: `${tg.gateway.origin}/api/v1`, maxRetries: 0 });
}

async function sdkStatus(client: OpenAI): Promise<{ status: number; code: string | null }> {
  try {
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages, max_tokens: 50 });
    return { status: 200, code: null };
  } catch (err) {
    if (!(err instanceof OpenAI.APIError)) throw err;
    return { status: err.status ?? 0, code: (err.code as string | null) ?? null };
  }
}

const MONTH = { period: 'monthly', period_start: '2026-11-01T00:00:00.000Z', resets_at: '2026-12-01T00:00:00.000Z' };

describe('creating users', () => {
  test('creates a user and answers 201 with the AdminUser, budget figures included', async () => {
    const res = await admin.post('/admin/api/users', {
      name: 'create-alice', email: 'alice@example.com', budget_limit_usd: 5, budget_period: 'monthly', rpm: 60,
    });
    assert.equal(res.status, 201, res.text);
    assert.match(res.body.created_at, ISO);
    assert.deepEqual(res.body, {
      id: res.body.id, name: 'create-alice', email: 'alice@example.com', disabled: false,
      budget_limit_usd: 5, budget_period: 'monthly', rpm: 60, tpm: null, max_concurrent: null, budget_alert_thresholds: null,
      created_at: res.body.created_at, updated_at: res.body.created_at,
      budget: { limit_usd: 5, spent_usd: 0, spent_nanos: 0, reserved_usd: 0, remaining_usd: 5, ...MONTH },
      key_count: 0, last_used_at: null,
    });
    const stored = await tg.gateway.store.db.selectFrom('gateway_users').selectAll().where('id', '=', res.body.id).executeTakeFirstOrThrow();
    assert.equal(stored.budget_limit_micros, 5_000_000);
  });

  test('defaults to an unlimited monthly user, whose remaining budget is null', async () => {
    const user = await createUser({ name: 'create-defaults' });
    assert.equal(user.budget_limit_usd, null);
    assert.equal(user.email, null);
    assert.deepEqual(user.budget, { limit_usd: null, spent_usd: 0, spent_nanos: 0, reserved_usd: 0, remaining_usd: null, ...MONTH });
  });

  test('a "never" budget has no period start and never resets', async () => {
    const user = await createUser({ name: 'create-never', budget_limit_usd: 1.5, budget_period: 'never' });
    assert.deepEqual(user.budget, {
      limit_usd: 1.5, spent_usd: 0, spent_nanos: 0, reserved_usd: 0, remaining_usd: 1.5, period: 'never', period_start: null, resets_at: null,
    });
  });

  test('a name that exists already is 409 conflict on "name"', async () => {
    await createUser({ name: 'create-dup' });
    assertError(await admin.post('/admin/api/users', { name: 'create-dup' }), 409, 'conflict', 'name');
  });

  test('invalid fields are 400 invalid_request naming the field', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{}, 'name'],
      [{ name: '   ' }, 'name'],
      [{ name: 42 }, 'name'],
      [{ name: '12345' }, 'name'],
      [{ name: 'x'.repeat(101) }, 'name'],
      [{ name: 'v', email: 'not-an-email' }, 'email'],
      [{ name: 'v', budget_limit_usd: -1 }, 'budget_limit_usd'],
      [{ name: 'v', budget_limit_usd: '5' }, 'budget_limit_usd'],
      [{ name: 'v', budget_period: 'yearly' }, 'budget_period'],
      [{ name: 'v', rpm: 0 }, 'rpm'],
      [{ name: 'v', tpm: 1.5 }, 'tpm'],
      [{ name: 'v', disabled: 'yes' }, 'disabled'],
      [{ name: 'v', budget: 5 }, 'budget'],
    ];
    for (const [body, param] of cases) assertError(await admin.post('/admin/api/users', body), 400, 'invalid_request', param);
    assertError(await admin.post('/admin/api/users', [1]), 400, 'invalid_request', null);
  });

  test('is refused without a session (401) and from a foreign Origin (403)', async () => {
    assertError(await admin.post('/admin/api/users', { name: 'create-nosession' }, NO_SESSION), 401, 'session_required', null);
    assertError(await admin.post('/admin/api/users', { name: 'create-evil' }, EVIL), 403, 'origin_mismatch', null);
    const names = (await admin.get('/admin/api/users?search=create-')).body.data.map((u: any) => u.name);
    assert.ok(!names.includes('create-nosession') && !names.includes('create-evil'));
  });
});

describe('listing users', () => {
  before(async () => {
    await createUser({ name: 'list-Charlie', email: 'c@corp.example', budget_limit_usd: 1 });
    await createUser({ name: 'list-alpha', email: 'a@home.example', budget_limit_usd: 10 });
    await createUser({ name: 'list-bravo', email: 'b@CORP.example' });
  });

  const names = (res: { body: any }) => res.body.data.map((u: any) => u.name);

  test('searches name or email, case-insensitively, sorted by name by default', async () => {
    const res = await admin.get('/admin/api/users?search=LIST-');
    assert.equal(res.status, 200);
    assert.deepEqual(names(res), ['list-alpha', 'list-bravo', 'list-Charlie']);
    assert.equal(res.body.total, 3);
    assert.equal(res.body.limit, 50);
    assert.equal(res.body.offset, 0);
    assert.deepEqual(names(await admin.get('/admin/api/users?search=corp.EXAMPLE')), ['list-bravo', 'list-Charlie']);
    assert.deepEqual((await admin.get('/admin/api/users?search=no-such-user')).body, { data: [], total: 0, limit: 50, offset: 0 });
  });

  test('sorts by name, created_at and budget, both ways', async () => {
    assert.deepEqual(names(await admin.get('/admin/api/users?search=list-&sort=name&order=desc')), ['list-Charlie', 'list-bravo', 'list-alpha']);
    assert.deepEqual(names(await admin.get('/admin/api/users?search=list-&sort=created_at')), ['list-Charlie', 'list-alpha', 'list-bravo']);
    assert.deepEqual(names(await admin.get('/admin/api/users?search=list-&sort=created_at&order=desc')), ['list-bravo', 'list-alpha', 'list-Charlie']);
    // Unlimited counts as the largest budget.
    assert.deepEqual(names(await admin.get('/admin/api/users?search=list-&sort=budget')), ['list-Charlie', 'list-alpha', 'list-bravo']);
    assert.deepEqual(names(await admin.get('/admin/api/users?search=list-&sort=budget&order=desc')), ['list-bravo', 'list-alpha', 'list-Charlie']);
  });

  test('sorts by live spend', async () => {
    const spender = await createUser({ name: 'list-spender' });
    await (await clientFor(spender.id)).chat.completions.create({ model: 'gpt-4o-mini', messages });
    const res = await admin.get('/admin/api/users?search=list-&sort=spend&order=desc');
    assert.equal(names(res)[0], 'list-spender');
    assert.equal(res.body.data[0].budget.spent_nanos, SIM_COST_NANOS);
    assert.equal(res.body.data[0].key_count, 1);
  });

  test('pages with limit and offset, total counting every match', async () => {
    const res = await admin.get('/admin/api/users?search=list-&limit=2&offset=1');
    assert.deepEqual(names(res), ['list-bravo', 'list-Charlie']);
    assert.equal(res.body.total, 4);
    assert.equal(res.body.limit, 2);
    assert.equal(res.body.offset, 1);
    assert.deepEqual(names(await admin.get('/admin/api/users?search=list-&limit=2&offset=4')), []);
  });

  test('invalid query parameters are 400 naming the parameter', async () => {
    assertError(await admin.get('/admin/api/users?sort=email'), 400, 'invalid_request', 'sort');
    assertError(await admin.get('/admin/api/users?order=up'), 400, 'invalid_request', 'order');
    assertError(await admin.get('/admin/api/users?limit=0'), 400, 'invalid_request', 'limit');
    assertError(await admin.get('/admin/api/users?limit=201'), 400, 'invalid_request', 'limit');
    assertError(await admin.get('/admin/api/users?offset=-1'), 400, 'invalid_request', 'offset');
    assertError(await admin.get('/admin/api/users?limit=ten'), 400, 'invalid_request', 'limit');
  });

  test('is 401 without a session', async () => {
    assertError(await admin.get('/admin/api/users', NO_SESSION), 401, 'session_required', null);
  });
});

describe('one user', () => {
  test('shows spend of a real request, key count and the key\'s last use', async () => {
    await tg.client.chat.completions.create({ model: 'gpt-4o-mini', messages });
    let res = await admin.get(`/admin/api/users/${tg.userId}`);
    // last_used_at is written back by auth-guard in the background (every 100 ms here; waited for up
    // to 30 s, a liveness bound for a busy machine).
    for (const deadline = Date.now() + 30_000; Date.now() < deadline && res.body.last_used_at === null;) {
      await new Promise((r) => setTimeout(r, 20));
      res = await admin.get(`/admin/api/users/${tg.userId}`);
    }
    assert.equal(res.status, 200);
    assert.equal(res.body.id, tg.userId);
    assert.deepEqual(res.body.budget, {
      limit_usd: 5, spent_usd: SIM_COST_NANOS / 1e9, spent_nanos: SIM_COST_NANOS, reserved_usd: 0,
      remaining_usd: (5e9 - SIM_COST_NANOS) / 1e9, ...MONTH,
    });
    assert.equal(res.body.key_count, 1);
    assert.equal(res.body.last_used_at, new Date(NOW_MS).toISOString());
  });

  test('an unknown or malformed id is 404 user_not_found', async () => {
    assertError(await admin.get('/admin/api/users/999999'), 404, 'user_not_found', 'id');
    assertError(await admin.get('/admin/api/users/abc'), 404, 'user_not_found', 'id');
  });

  test('is 401 without a session', async () => {
    assertError(await admin.get(`/admin/api/users/${tg.userId}`, NO_SESSION), 401, 'session_required', null);
  });
});

describe('editing users', () => {
  test('changes only the given fields and answers the AdminUser', async () => {
    const user = await createUser({ name: 'edit-before', email: 'e@example.com', rpm: 10, budget_limit_usd: 2 });
    const res = await admin.patch(`/admin/api/users/${user.id}`, { name: 'edit-after', email: null, budget_period: 'daily', tpm: 5000 });
    assert.equal(res.status, 200, res.text);
    assert.match(res.body.updated_at, ISO);
    assert.deepEqual(res.body, {
      ...user, name: 'edit-after', email: null, budget_period: 'daily', tpm: 5000, updated_at: res.body.updated_at,
      budget: {
        limit_usd: 2, spent_usd: 0, spent_nanos: 0, reserved_usd: 0, remaining_usd: 2,
        period: 'daily', period_start: '2026-11-20T00:00:00.000Z', resets_at: '2026-11-21T00:00:00.000Z',
      },
    });
    assert.deepEqual((await admin.get(`/admin/api/users/${user.id}`)).body, res.body);
  });

  test('a lowered budget refuses the very next request with 402', async () => {
    const user = await createUser({ name: 'edit-budget', budget_limit_usd: 5 });
    const client = await clientFor(user.id);
    assert.equal((await sdkStatus(client)).status, 200);
    const res = await admin.patch(`/admin/api/users/${user.id}`, { budget_limit_usd: 0.000001 });
    assert.equal(res.body.budget.limit_usd, 0.000001);
    assert.deepEqual(await sdkStatus(client), { status: 402, code: 'budget_exceeded' });
    await admin.patch(`/admin/api/users/${user.id}`, { budget_limit_usd: null });
    assert.equal((await sdkStatus(client)).status, 200);
  });

  test('disabling a user refuses its next request with 403, enabling lets it through again', async () => {
    const user = await createUser({ name: 'edit-disable' });
    const client = await clientFor(user.id);
    assert.equal((await sdkStatus(client)).status, 200);
    assert.equal((await admin.patch(`/admin/api/users/${user.id}`, { disabled: true })).body.disabled, true);
    assert.deepEqual(await sdkStatus(client), { status: 403, code: 'permission_denied' });
    await admin.patch(`/admin/api/users/${user.id}`, { disabled: false });
    assert.equal((await sdkStatus(client)).status, 200);
  });

  test('renaming to another user\'s name is 409; keeping its own name is fine', async () => {
    const a = await createUser({ name: 'edit-taken' });
    const b = await createUser({ name: 'edit-other' });
    assertError(await admin.patch(`/admin/api/users/${b.id}`, { name: 'edit-taken' }), 409, 'conflict', 'name');
    assert.equal((await admin.patch(`/admin/api/users/${a.id}`, { name: 'edit-taken' })).status, 200);
  });

  test('invalid fields are 400, unknown users 404, foreign Origin 403, no session 401', async () => {
    const user = await createUser({ name: 'edit-invalid' });
    assertError(await admin.patch(`/admin/api/users/${user.id}`, { name: null }), 400, 'invalid_request', 'name');
    assertError(await admin.patch(`/admin/api/users/${user.id}`, { budget_limit_usd: -0.5 }), 400, 'invalid_request', 'budget_limit_usd');
    assertError(await admin.patch(`/admin/api/users/${user.id}`, { id: 7 }), 400, 'invalid_request', 'id');
    assertError(await admin.patch('/admin/api/users/999999', { name: 'x' }), 404, 'user_not_found', 'id');
    assertError(await admin.patch(`/admin/api/users/${user.id}`, { disabled: true }, EVIL), 403, 'origin_mismatch', null);
    assertError(await admin.patch(`/admin/api/users/${user.id}`, { disabled: true }, NO_SESSION), 401, 'session_required', null);
    assert.equal((await admin.get(`/admin/api/users/${user.id}`)).body.disabled, false);
  });
});

describe('deleting users', () => {
  test('deletes the user and its keys but keeps its request history, owner NULL', async () => {
    const user = await createUser({ name: 'delete-me' });
    const client = await clientFor(user.id);
    const { response } = await client.chat.completions.create({ model: 'gpt-4o-mini', messages }).withResponse();
    const requestId = response.headers.get('x-request-id')!;
    const before = await tg.logRow(requestId);
    assert.equal(before.gateway_user_id, user.id);

    const res = await admin.delete(`/admin/api/users/${user.id}`);
    assert.equal(res.status, 204);
    assert.equal(res.text, '');

    const row = await tg.logRow(requestId);
    assert.equal(row.gateway_user_id, null);
    assert.equal(row.api_key_id, null);
    assert.equal(row.status, 200);
    assert.equal(row.cost_nanos, before.cost_nanos);
    assertError(await admin.get(`/admin/api/users/${user.id}`), 404, 'user_not_found', 'id');
    const keys = await tg.gateway.store.db.selectFrom('api_keys').select('id').where('gateway_user_id', '=', user.id).execute();
    assert.deepEqual(keys, []);
    assert.deepEqual(await sdkStatus(client), { status: 401, code: 'invalid_api_key' });
  });

  test('an unknown user is 404; foreign Origin 403 and no session 401 delete nothing', async () => {
    const user = await createUser({ name: 'delete-guarded' });
    assertError(await admin.delete('/admin/api/users/999999'), 404, 'user_not_found', 'id');
    assertError(await admin.delete(`/admin/api/users/${user.id}`, EVIL), 403, 'origin_mismatch', null);
    assertError(await admin.delete(`/admin/api/users/${user.id}`, NO_SESSION), 401, 'session_required', null);
    assert.equal((await admin.get(`/admin/api/users/${user.id}`)).status, 200);
  });
});

describe('without the budget plugin', () => {
  let bare: TestGateway;
  before(async () => {
    bare = await startTestGateway({
      providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-shared' } },
      config: { budget: false },
      user: { budgetUsd: 3, budgetPeriod: 'weekly' },
    });
  });
  after(() => bare?.close());

  test('shows the limit and period from the user, with null figures', async () => {
    const res = await (await loginAdmin(bare.gateway.origin)).get(`/admin/api/users/${bare.userId}`);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.budget, {
      limit_usd: 3, spent_usd: null, spent_nanos: null, reserved_usd: null, remaining_usd: null, period: 'weekly', period_start: null, resets_at: null,
    });
  });
});
