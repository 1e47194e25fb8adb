/**
 * `/admin/api/teams`: an admin creates a team with a budget and members through the API, a member is
 * refused once the team's budget is spent and the team shows that spend; a team-admin reaches only its
 * own teams (403 `team_forbidden` elsewhere, `role_forbidden` on create and on user writes) and a viewer
 * none of the writes; every write leaves exactly one audit row.
 *
 * Prices as test/plugins/budget-teams.test.ts: one simulator answer (19 prompt + 24 completion tokens)
 * costs 670,000 nanos at $10 / $20 per million, and `max_tokens: 40` reserves at least 800,000.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from '../../helpers/test-gateway.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../../helpers/openai-simulator.ts';
import { dataDirWithPrices } from '../../helpers/prices.ts';
import { eventually } from '../../helpers/eventually.ts';
import { adminFetch, assertError, loginAdmin, type AdminClient } from '../../helpers/admin-client.ts';
import { createSessionStore } from '../../../core/admin/sessions.ts';
import type { AdminRole } from '../../../core/admin/context.ts';

const COST_NANOS = 670_000;

let sim: OpenAISimulator;
let tg: TestGateway;
let admin: AdminClient;

before(async () => {
  sim = await startOpenAISimulator();
  tg = await startTestGateway({
    dataDir: await dataDirWithPrices([{ model: 'gpt-4o-mini', provider: 'openai', input: 10, output: 20 }]),
    providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-test' } },
    config: { pricing: { seedOnFirstStart: false }, budget: { timeZone: 'UTC' } },
  });
  admin = await loginAdmin(tg.gateway.origin);
});

after(async () => {
  await tg?.close();
  await sim?.close();
});

/** A session cookie of a new admin with `role` (and the teams it manages), as single sign-on would make it. */
async function sessionOf(role: AdminRole, teams: string[] = []): Promise<string> {
  const db = tg.gateway.store.db;
  const username = `${role}-${Math.random().toString(36).slice(2)}`;
  const row = await db.insertInto('admin_users').values({ username, password_hash: 'sso:oidc', created_at: new Date().toISOString() }).returning('id').executeTakeFirstOrThrow();
  const sessions = createSessionStore(tg.gateway.store, () => Date.now(), { idleMs: 3_600_000, maxMs: 3_600_000 });
  const { token } = await sessions.create({ id: row.id, username, role, teams }, { ip: null, userAgent: null });
  return `tollgate_session=${token}`;
}

const call = (cookie: string, method: string, path: string, body?: unknown) => adminFetch(tg.gateway.origin, method, path, body, { cookie });

async function auditCount(): Promise<number> {
  const row = await tg.gateway.store.db.selectFrom('audit_log').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Runs `write` and checks it left exactly one audit row, with `action` on `team` `objectId`. */
async function audited<T>(action: string, write: () => Promise<T>, objectId?: number): Promise<T> {
  const beforeCount = await auditCount();
  const result = await write();
  assert.equal(await auditCount(), beforeCount + 1, `one audit row for ${action}`);
  const last = await tg.gateway.store.db.selectFrom('audit_log').selectAll().orderBy('id', 'desc').executeTakeFirstOrThrow();
  assert.equal(last.action, action);
  assert.equal(last.object_type, 'team');
  if (objectId !== undefined) assert.equal(last.object_id, String(objectId));
  return result;
}

async function createUser(name: string): Promise<number> {
  const res = await admin.post('/admin/api/users', { name, budget_limit_usd: 10 });
  assert.equal(res.status, 201, res.text);
  return res.body.id;
}

async function clientFor(userId: number): Promise<OpenAI> {
  const res = await admin.post(`/admin/api/users/${userId}/keys`, { name: 'sdk' });
  assert.equal(res.status, 201, res.text);
  return new OpenAI({ apiKey: res.body.key, baseURL: `${tg.gateway.origin}/api/v1`, maxRetries: 0 });
}

async function ask(client: OpenAI): Promise<{ status: number; message: string }> {
  try {
    await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 40 });
    return { status: 200, message: '' };
  } catch (err) {
    if (!(err instanceof OpenAI.APIError)) throw err;
    return { status: err.status ?? 0, message: (err.error as { message?: string } | undefined)?.message ?? '' };
  }
}

describe('teams through the admin API', () => {
  test('an admin creates a team with a budget and two members; the team budget refuses a member once spent, and GET shows the spend', async () => {
    const team = await audited('teams.create', async () => {
      const res = await admin.post('/admin/api/teams', { name: 'budgeted', budget_limit_usd: (1.5 * COST_NANOS) / 1e9, budget_period: 'monthly', rpm: 100 });
      assert.equal(res.status, 201, res.text);
      return res.body;
    });
    assert.equal(team.name, 'budgeted');
    assert.equal(team.rpm, 100);
    assert.deepEqual(team.member_ids, []);
    assert.equal(team.budget.spent_usd, 0);
    assert.equal(team.budget.limit_usd, (1.5 * COST_NANOS) / 1e9);
    assert.equal(team.budget.period, 'monthly');

    const conflictRes = await admin.post('/admin/api/teams', { name: 'budgeted' });
    assertError(conflictRes, 409, 'conflict', 'name');

    const users = [await createUser('team-member-a'), await createUser('team-member-b')];
    for (const userId of users) {
      const res = await audited('teams.add_member', () => admin.post(`/admin/api/teams/${team.id}/members`, { user_id: userId }), team.id);
      assert.equal(res.status, 200, res.text);
    }
    const withMembers = await admin.get(`/admin/api/teams/${team.id}`);
    assert.deepEqual(withMembers.body.member_ids, users);

    const clients = [await clientFor(users[0]!), await clientFor(users[1]!)];
    assert.equal((await ask(clients[0]!)).status, 200);
    // Half a request is left in the team: the other member, well within their own $10, is refused.
    const refused = await ask(clients[1]!);
    assert.equal(refused.status, 402);
    assert.match(refused.message, /your team "budgeted"/);

    await eventually(async () => {
      const res = await admin.get(`/admin/api/teams/${team.id}`);
      assert.equal(res.body.budget.spent_nanos, COST_NANOS);
    });
    const shown = (await admin.get(`/admin/api/teams/${team.id}`)).body;
    assert.equal(shown.budget.spent_usd, COST_NANOS / 1e9);
    assert.equal(shown.budget.reserved_usd, 0);
    assert.ok(Math.abs(shown.budget.remaining_usd - (0.5 * COST_NANOS) / 1e9) < 1e-12);
    // The usage log names the team, and filters by it: the served request and the refused one.
    const logged = (await admin.get(`/admin/api/logs?team_id=${team.id}`)).body.data;
    assert.deepEqual(logged.map((r: any) => [r.status, r.team_id, r.team_name]).sort(), [[200, team.id, 'budgeted'], [402, team.id, 'budgeted']]);

    // Raising the budget through PATCH lets the refused member through at once.
    const patched = await audited('teams.update', () => admin.patch(`/admin/api/teams/${team.id}`, { budget_limit_usd: 1 }), team.id);
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.budget.limit_usd, 1);
    assert.equal((await ask(clients[1]!)).status, 200);

    const removed = await audited('teams.remove_member', () => admin.delete(`/admin/api/teams/${team.id}/members/${users[1]}`), team.id);
    assert.deepEqual(removed.body.member_ids, [users[0]]);
    assertError(await admin.delete(`/admin/api/teams/${team.id}/members/${users[1]}`), 404, 'user_not_found', 'userId');
    assertError(await admin.get('/admin/api/teams/999999'), 404, 'team_not_found', 'id');
    assertError(await admin.post(`/admin/api/teams/${team.id}/members`, { user_id: 999999 }), 404, 'user_not_found', 'user_id');
    assertError(await admin.patch(`/admin/api/teams/${team.id}`, { rpm: -1 }), 400, 'invalid_request', 'rpm');
    assertError(await admin.patch(`/admin/api/teams/${team.id}`, { colour: 'red' }), 400, 'invalid_request', 'colour');

    const deleted = await audited('teams.delete', () => admin.delete(`/admin/api/teams/${team.id}`), team.id);
    assert.equal(deleted.status, 204);
    assertError(await admin.get(`/admin/api/teams/${team.id}`), 404, 'team_not_found', 'id');
    const member = await tg.gateway.store.db.selectFrom('gateway_users').select('team_id').where('id', '=', users[0]!).executeTakeFirstOrThrow();
    assert.equal(member.team_id, null);
  });

  test('a team-admin reads, edits and adds members to its own team only, and may not create teams nor write users', async () => {
    const search = (await admin.post('/admin/api/teams', { name: 'search' })).body;
    const ads = (await admin.post('/admin/api/teams', { name: 'ads' })).body;
    const cookie = await sessionOf('team-admin', ['search']);

    const list = await call(cookie, 'GET', '/admin/api/teams');
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.body.data.map((t: { name: string }) => t.name), ['search']);
    assert.equal((await call(cookie, 'GET', `/admin/api/teams/${search.id}`)).status, 200);
    const patched = await audited('teams.update', () => call(cookie, 'PATCH', `/admin/api/teams/${search.id}`, { rpm: 30, models: ['openai/*'] }), search.id);
    assert.equal(patched.status, 200, patched.text);
    assert.equal(patched.body.rpm, 30);
    assert.deepEqual(patched.body.models, ['openai/*']);
    const userId = await createUser('search-member');
    const added = await audited('teams.add_member', () => call(cookie, 'POST', `/admin/api/teams/${search.id}/members`, { user_id: userId }), search.id);
    assert.deepEqual(added.body.member_ids, [userId]);
    const audit = await tg.gateway.store.db.selectFrom('audit_log').selectAll().orderBy('id', 'desc').executeTakeFirstOrThrow();
    assert.equal(audit.role, 'team-admin');

    const beforeCount = await auditCount();
    assertError(await call(cookie, 'GET', `/admin/api/teams/${ads.id}`), 403, 'team_forbidden', null);
    assertError(await call(cookie, 'PATCH', `/admin/api/teams/${ads.id}`, { rpm: 1 }), 403, 'team_forbidden', null);
    assertError(await call(cookie, 'POST', `/admin/api/teams/${ads.id}/members`, { user_id: userId }), 403, 'team_forbidden', null);
    assertError(await call(cookie, 'PATCH', `/admin/api/teams/${search.id}`, { name: 'renamed' }), 403, 'role_forbidden', null);
    assertError(await call(cookie, 'POST', '/admin/api/teams', { name: 'mine' }), 403, 'role_forbidden', null);
    assertError(await call(cookie, 'DELETE', `/admin/api/teams/${search.id}`), 403, 'role_forbidden', null);
    assertError(await call(cookie, 'POST', '/admin/api/users', { name: 'nope' }), 403, 'role_forbidden', null);
    assertError(await call(cookie, 'PATCH', `/admin/api/users/${userId}`, { rpm: 1 }), 403, 'role_forbidden', null);
    assert.equal(await auditCount(), beforeCount, 'refused writes leave no audit row');
    const adsNow = (await admin.get(`/admin/api/teams/${ads.id}`)).body;
    assert.equal(adsNow.rpm, null);
    assert.deepEqual(adsNow.member_ids, []);
  });

  test('a viewer reads teams but gets 403 on every team write', async () => {
    const team = (await admin.post('/admin/api/teams', { name: 'viewed' })).body;
    const cookie = await sessionOf('viewer');
    assert.equal((await call(cookie, 'GET', '/admin/api/teams')).status, 200);
    assert.equal((await call(cookie, 'GET', `/admin/api/teams/${team.id}`)).status, 200);
    const userId = await createUser('viewer-target');
    const beforeCount = await auditCount();
    const writes: Array<[string, string, unknown?]> = [
      ['POST', '/admin/api/teams', { name: 'v2' }],
      ['PATCH', `/admin/api/teams/${team.id}`, { rpm: 5 }],
      ['DELETE', `/admin/api/teams/${team.id}`],
      ['POST', `/admin/api/teams/${team.id}/members`, { user_id: userId }],
      ['DELETE', `/admin/api/teams/${team.id}/members/${userId}`],
    ];
    for (const [method, path, body] of writes) assertError(await call(cookie, method, path, body), 403, 'role_forbidden', null);
    assert.equal(await auditCount(), beforeCount);
  });
});
