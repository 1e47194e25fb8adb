/**
 * Every state-changing admin call leaves exactly one audit-log row (issue 43, item 4): driven over HTTP
 * for each mutating route, each row checked for its actor, role, address, action, object, before/after,
 * and that no secret sent or answered appears anywhere in it; reads, failures and calculations leave none.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway } from '../../helpers/test-gateway.ts';
import { adminFetch, loginAdmin, TEST_ADMIN, type AdminClient } from '../../helpers/admin-client.ts';
import { defaultAuditAction } from '../../../core/admin/router.ts';

const PROVIDER_KEY = 'sk-audit-provider-secret-0123456789';
const NEW_PASSWORD = 'a brand new admin password';

let tg: TestGateway;
let admin: AdminClient;
/** Every secret the tests sent or were answered; none may appear in any audit row. */
const secrets: string[] = [PROVIDER_KEY, NEW_PASSWORD, TEST_ADMIN.password];

before(async () => {
  tg = await startTestGateway({ providers: { openai: { type: 'openai', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-shared-not-used' } } });
  admin = await loginAdmin(tg.gateway.origin);
});

after(async () => {
  await tg?.close();
});

async function rowsAfter(id: number): Promise<any[]> {
  const res = await admin.get('/admin/api/audit?limit=500');
  assert.equal(res.status, 200, res.text);
  return (res.body.data as any[]).filter((r) => r.id > id).reverse();
}

async function headId(): Promise<number> {
  const res = await admin.get('/admin/api/audit?limit=1');
  return res.body.data[0]?.id ?? 0;
}

/** Runs `call`, asserts it made exactly one row with `action`, and returns that row after the common checks. */
async function oneRow(action: string, call: () => Promise<{ status: number; text: string }>, expectStatus: number): Promise<any> {
  const start = await headId();
  const res = await call();
  assert.equal(res.status, expectStatus, res.text);
  const rows = await rowsAfter(start);
  assert.equal(rows.length, 1, `${action}: ${JSON.stringify(rows)}`);
  const row = rows[0];
  assert.equal(row.action, action);
  assert.equal(row.actor, 'admin');
  assert.equal(row.actor_kind, 'admin');
  assert.equal(row.role, 'admin');
  assert.match(row.ip, /127\.0\.0\.1/);
  assert.match(row.request_id, /\S/);
  assert.match(row.hash, /^[0-9a-f]{64}$/);
  const text = JSON.stringify(row);
  for (const secret of secrets) assert.ok(!text.includes(secret), `${action}'s row holds a secret: ${text}`);
  return row;
}

async function noRow(call: () => Promise<{ status: number }>, expectStatus: number): Promise<void> {
  const start = await headId();
  assert.equal((await call()).status, expectStatus);
  assert.deepEqual(await rowsAfter(start), []);
}

describe('admin writes', () => {
  let userId: number;
  let keyId: number;

  test('creating a user records users.create with the user after and nothing before', async () => {
    const row = await oneRow('users.create', async () => {
      const res = await admin.post('/admin/api/users', { name: 'audited-user', budget_limit_usd: 5 });
      userId = res.body.id;
      return res;
    }, 201);
    assert.equal(row.object_type, 'user');
    assert.equal(row.object_id, String(userId));
    assert.equal(row.before, null);
    assert.equal(row.after.name, 'audited-user');
  });

  test('updating a user records the user before and after the change', async () => {
    const row = await oneRow('users.update', () => admin.patch(`/admin/api/users/${userId}`, { budget_limit_usd: 7, email: 'a@example.com' }), 200);
    assert.equal(row.before.budget_limit_usd, 5);
    assert.equal(row.after.budget_limit_usd, 7);
    assert.equal(row.before.email, null);
    assert.equal(row.after.email, 'a@example.com');
  });

  test('creating a key records keys.create without the key itself', async () => {
    let key = '';
    const row = await oneRow('keys.create', async () => {
      const res = await admin.post(`/admin/api/users/${userId}/keys`, { name: 'ci' });
      key = res.body.key;
      keyId = res.body.id;
      secrets.push(key);
      return res;
    }, 201);
    assert.ok(key.length > 20);
    assert.ok(!JSON.stringify(row).includes(key));
    assert.equal(row.object_type, 'key');
    assert.equal(row.object_id, String(keyId));
    assert.equal(row.after.name, 'ci');
  });

  test('revoking a key records its state before and after', async () => {
    const row = await oneRow('keys.revoke', () => admin.post(`/admin/api/keys/${keyId}/revoke`), 200);
    assert.equal(row.before.revoked_at, null);
    assert.match(row.after.revoked_at, /^\d{4}-/);
  });

  test('setting and deleting a provider credential records the masked view only', async () => {
    const set = await oneRow('credentials.set', () => admin.put(`/admin/api/users/${userId}/credentials/openai`, { api_key: PROVIDER_KEY }), 200);
    assert.equal(set.object_id, `${userId}/openai`);
    assert.equal(set.before, null);
    assert.equal(set.after.provider, 'openai');
    const replaced = await oneRow('credentials.set', () => admin.put(`/admin/api/users/${userId}/credentials/openai`, { api_key: `${PROVIDER_KEY}-2` }), 200);
    assert.equal(replaced.before.hint, set.after.hint);
    const gone = await oneRow('credentials.delete', () => admin.delete(`/admin/api/users/${userId}/credentials/openai`), 204);
    assert.equal(gone.after, null);
    assert.equal(gone.before.provider, 'openai');
  });

  test('pricing create, edit and delete each record one row with the price before and after', async () => {
    const body = { model: 'audit-model', provider: 'openai', input_price_per_million: 1, output_price_per_million: 2 };
    const created = await oneRow('pricing.create', () => admin.post('/admin/api/pricing', body), 201);
    assert.equal(created.object_id, 'audit-model');
    assert.equal(created.after.input_price_per_million, 1);
    const edited = await oneRow('pricing.set', () => admin.put('/admin/api/pricing/audit-model', { ...body, input_price_per_million: 3 }), 200);
    assert.equal(edited.before.input_price_per_million, 1);
    assert.equal(edited.after.input_price_per_million, 3);
    const deleted = await oneRow('pricing.delete', () => admin.delete('/admin/api/pricing/audit-model'), 204);
    assert.equal(deleted.before.input_price_per_million, 3);
  });

  test('deleting a user records the user as it was', async () => {
    const row = await oneRow('users.delete', () => admin.delete(`/admin/api/users/${userId}`), 204);
    assert.equal(row.before.name, 'audited-user');
    assert.equal(row.after, null);
  });

  test('reads, refused writes and calculations leave no row', async () => {
    await noRow(() => admin.get('/admin/api/users'), 200);
    await noRow(() => admin.post('/admin/api/users', { name: '' }), 400);
    await noRow(() => admin.patch('/admin/api/users/999999', { email: null }), 404);
    await noRow(() => admin.post('/admin/api/users', { name: 'x' }, { origin: 'http://evil.example' }), 403);
    await noRow(() => admin.post('/admin/api/pricing/calculate', { model: 'nope', input_tokens: 1, output_tokens: 1 }), 404);
  });

  test('the price dataset import records its counts', async () => {
    const row = await oneRow('pricing.import', () => admin.post('/admin/api/pricing/import'), 200);
    assert.equal(typeof row.after.inserted, 'number');
  });
});

describe('sessions', () => {
  test('a sign-in and a sign-out are recorded; a failed sign-in is not', async () => {
    const start = await headId();
    const bad = await adminFetch(tg.gateway.origin, 'POST', '/admin/api/login', { username: 'admin', password: 'wrong password' });
    assert.equal(bad.status, 401);
    const second = await loginAdmin(tg.gateway.origin);
    assert.equal((await second.post('/admin/api/logout')).status, 204);
    const rows = await rowsAfter(start);
    assert.deepEqual(rows.map((r) => [r.action, r.actor, r.role]), [['session.login', 'admin', 'admin'], ['session.logout', 'admin', 'admin']]);
    for (const row of rows) assert.ok(!JSON.stringify(row).includes(TEST_ADMIN.password));
  });

  test('a password change is recorded without either password', async () => {
    const row = await oneRow('account.password', () => admin.post('/admin/api/account/password', { current_password: TEST_ADMIN.password, new_password: NEW_PASSWORD }), 200);
    assert.equal(row.object_type, 'admin');
  });
});

describe('reading the log', () => {
  test('filters by action and actor, pages newest first, and the CSV has the same rows', async () => {
    const all = (await admin.get('/admin/api/audit?limit=500')).body.data as any[];
    assert.ok(all.length >= 10);
    assert.deepEqual(all.map((r) => r.id), [...all.map((r) => r.id)].sort((a, b) => b - a));
    const creates = (await admin.get('/admin/api/audit?action=users.create')).body.data as any[];
    assert.deepEqual(creates.map((r) => r.action), ['users.create']);
    const prefixed = (await admin.get('/admin/api/audit?action=pricing.*')).body.data as any[];
    assert.deepEqual(prefixed.map((r) => r.action), ['pricing.import', 'pricing.delete', 'pricing.set', 'pricing.create']);
    assert.deepEqual((await admin.get('/admin/api/audit?actor=nobody')).body.data, []);
    const first = await admin.get('/admin/api/audit?limit=2');
    const second = await admin.get(`/admin/api/audit?limit=2&cursor=${first.body.next_cursor}`);
    assert.deepEqual([...first.body.data, ...second.body.data].map((r: any) => r.id), all.slice(0, 4).map((r) => r.id));
    const csv = await admin.get('/admin/api/audit.csv?action=users.create');
    assert.equal(csv.status, 200);
    assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
    const lines = csv.text.trim().split('\r\n');
    assert.equal(lines[0], 'id,at,actor,actor_kind,role,ip,action,object_type,object_id,before,after,request_id,prev_hash,hash');
    assert.equal(lines.length, 2);
    assert.match(lines[1]!, /users\.create/);
    const verify = await admin.get('/admin/api/audit/verify');
    assert.deepEqual(verify.body, { ok: true, rows: all.length, firstBadId: null, reason: null });
  });

  test('a bad time filter is a 400 naming the field', async () => {
    const res = await admin.get('/admin/api/audit?from=yesterday');
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'from');
  });
});

describe('the default row of a route that reports nothing', () => {
  test('names the action from the method and the pattern, and the object from its first segment and last parameter', () => {
    assert.deepEqual(defaultAuditAction('POST', '/admin/api/teams', {}), { action: 'teams.create', objectType: 'teams', objectId: null });
    assert.deepEqual(defaultAuditAction('PATCH', '/admin/api/teams/:id', { id: '4' }), { action: 'teams.update', objectType: 'teams', objectId: '4' });
    assert.deepEqual(defaultAuditAction('DELETE', '/admin/api/teams/:id/members/:user', { id: '4', user: '9' }), { action: 'teams.members.delete', objectType: 'teams', objectId: '9' });
    assert.deepEqual(defaultAuditAction('PUT', '/admin/api/settings', {}), { action: 'settings.set', objectType: 'settings', objectId: null });
    assert.deepEqual(defaultAuditAction('POST', '/admin/api/keys/:id/rotate', { id: '3' }), { action: 'keys.rotate', objectType: 'keys', objectId: '3' });
  });
});
