/**
 * Teams (issue 43 item 1) through the whole gateway on SQLite: a member's request reserves against
 * the user's budget AND the team's, all or nothing; a team's refusal names the team (402 as a
 * user's); serve-what-fits caps to the tighter of the two; the team's rpm and model allow-list apply
 * on top of the user's and the key's; log rows and `GET /api/account` carry the team.
 *
 * Prices as test/plugins/budget.test.ts: the simulator's usage (19 prompt + 24 completion tokens)
 * costs 670,000 nanos at $10 / $20 per million, and `max_tokens: 40` reserves ≥ 800,000.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { dataDirWithPrices } from '../helpers/prices.ts';
import { eventually } from '../helpers/eventually.ts';
import { createGatewayUser, type UserFields } from '../../core/accounts/gateway-users.ts';
import { createApiKey } from '../../core/accounts/api-keys.ts';
import { addTeamMember, createTeam, type TeamFields } from '../../core/accounts/teams.ts';

const COST_NANOS = 670_000;
const PRICES = [
  { model: 'gpt-4o-mini', provider: 'openai', input: 10, output: 20 },
  { model: 'gpt-4o', provider: 'openai', input: 10, output: 20 },
];

let sim: OpenAISimulator;
before(async () => {
  sim = await startOpenAISimulator();
});
after(async () => {
  await sim?.close();
});

async function gateway(): Promise<TestGateway> {
  return startTestGateway({
    dataDir: await dataDirWithPrices(PRICES),
    providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-test' } },
    config: { pricing: { seedOnFirstStart: false }, budget: { timeZone: 'UTC' } },
  });
}

const unique = () => Math.random().toString(36).slice(2);

/** A team with `fields` and `members` users (each with `user` fields), each with an SDK client. */
async function team(tg: TestGateway, fields: Omit<TeamFields, 'name'>, members: number, user: Omit<UserFields, 'name'> = {}) {
  const db = tg.gateway.store.db;
  const created = await createTeam(db, { ...fields, name: `team-${unique()}` });
  const clients = [];
  const users = [];
  for (let i = 0; i < members; i++) {
    const u = await createGatewayUser(db, { ...user, name: `member-${unique()}` });
    assert.ok(await addTeamMember(db, created.id, u.id));
    const key = await createApiKey(db, { gatewayUserId: u.id });
    users.push(u);
    clients.push({ user: u, key: key.key, client: new OpenAI({ apiKey: key.key, baseURL: `${tg.gateway.origin}/api/v1`, maxRetries: 0 }) });
  }
  return { team: created, users, clients };
}

/** Status, message and headers of one chat request (never throws). */
async function ask(client: OpenAI, body: { model?: string; max_tokens?: number } = {}) {
  try {
    const completion = await client.chat.completions.create({ model: body.model ?? 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: body.max_tokens ?? 40 });
    return { status: 200, message: '', code: '', completion };
  } catch (err) {
    if (!(err instanceof OpenAI.APIError)) throw err;
    const error = err.error as { message?: string; code?: string; type?: string } | undefined;
    return { status: err.status ?? 0, message: error?.message ?? '', code: error?.code ?? error?.type ?? '', completion: null };
  }
}

/** The team's stored spend once the log holds `requests` rows of the team (each spend commits with its row). */
async function teamSpentNanos(tg: TestGateway, teamId: number, requests: number): Promise<number> {
  const db = tg.gateway.store.db;
  await eventually(async () => {
    const { rows } = await db.selectFrom('llm_requests').select((eb) => eb.fn.countAll<number>().as('rows')).where('team_id', '=', teamId).executeTakeFirstOrThrow();
    assert.equal(Number(rows), requests, 'the requests\' rows are logged with the team');
  });
  const row = await db.selectFrom('teams').select('budget_spent_nanos').where('id', '=', teamId).executeTakeFirstOrThrow();
  return row.budget_spent_nanos;
}

describe('team budgets', () => {
  test('100 concurrent requests from 5 members against a team budget that fits 20: at most 20 served, the rest 402, team spend within the limit', async () => {
    const tg = await gateway();
    try {
      const { team: t, clients } = await team(tg, { budgetUsd: (20 * COST_NANOS) / 1e9 }, 5, { budgetUsd: 1 });
      const results = await Promise.all(Array.from({ length: 100 }, (_, i) => ask(clients[i % 5]!.client)));
      const served = results.filter((r) => r.status === 200).length;
      const refused = results.filter((r) => r.status === 402);
      assert.equal(served + refused.length, 100, `unexpected statuses: ${results.map((r) => r.status).join(',')}`);
      assert.ok(served >= 1 && served <= 20, `served ${served}`);
      for (const r of refused) assert.match(r.message, new RegExp(`your team "${t.name}"`));
      const spent = await teamSpentNanos(tg, t.id, 100);
      assert.equal(spent, served * COST_NANOS);
      assert.ok(spent <= 20 * COST_NANOS);
      // Each member's own spend is what their served requests cost: the user's budget saw the same amounts.
      const users = await tg.gateway.store.db.selectFrom('gateway_users').select(['id', 'budget_spent_nanos']).where('team_id', '=', t.id).execute();
      assert.equal(users.reduce((sum, u) => sum + u.budget_spent_nanos, 0), spent);
    } finally {
      await tg.close();
    }
  });

  test('a member within their own budget is refused by the team\'s, and the message names the team', async () => {
    const tg = await gateway();
    try {
      const { team: t, clients } = await team(tg, { budgetUsd: (1.5 * COST_NANOS) / 1e9 }, 2, { budgetUsd: 10 });
      assert.equal((await ask(clients[0]!.client)).status, 200);
      // The team has 0.5 of a request left: the next worst case does not fit it, whoever asks.
      const refused = await ask(clients[1]!.client);
      assert.equal(refused.status, 402);
      assert.equal(refused.code, 'budget_exceeded');
      assert.match(refused.message, new RegExp(`your team "${t.name}"`));
      assert.doesNotMatch(refused.message, /\$|USD/);
      // The refused member's own budget holds nothing of the refused request.
      const account = await fetch(`${tg.gateway.origin}/api/account`, { headers: { authorization: `Bearer ${clients[1]!.key}` } });
      const body = await account.json() as { budget: { spent_usd: number; reserved_usd: number }; team: { id: number; name: string; budget: { spent_usd: number; limit_usd: number } } | null };
      assert.equal(body.budget.reserved_usd, 0);
      assert.equal(body.budget.spent_usd, 0);
      assert.equal(body.team?.name, t.name);
      assert.equal(body.team?.budget.spent_usd, COST_NANOS / 1e9);
      // Once the team's budget is used up, the pre-check refuses too, naming the team.
      await tg.gateway.store.db.updateTable('teams').set({ budget_limit_micros: 600 }).where('id', '=', t.id).execute();
      // As the admin API does after a write: every cache of this process re-reads.
      tg.gateway.store.notifyChange();
      const exhausted = await ask(clients[0]!.client);
      assert.equal(exhausted.status, 402);
      assert.match(exhausted.message, new RegExp(`The budget of your team "${t.name}" for this period is used up`));
    } finally {
      await tg.close();
    }
  });

  test('serve-what-fits caps to the team\'s remainder when it is tighter, then to the user\'s when that is', async () => {
    const tg = await gateway();
    try {
      // $0.02 team, $1 user: capped to what $0.02 pays (20,000 nanos per output token): under 1000 tokens.
      const tight = await team(tg, { budgetUsd: 0.02 }, 1, { budgetUsd: 1 });
      const a = await tight.clients[0]!.client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 100_000 }).withResponse();
      const teamCap = Number(a.response.headers.get('x-tollgate-max-tokens-capped'));
      assert.ok(teamCap > 990 && teamCap < 1000, String(teamCap));
      assert.equal(sim.requests.at(-1)!.body!.max_tokens, teamCap);
      // $1 team, $0.01 user: the user's remainder is tighter, about half the tokens.
      const loose = await team(tg, { budgetUsd: 1 }, 1, { budgetUsd: 0.01 });
      const b = await loose.clients[0]!.client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], max_tokens: 100_000 }).withResponse();
      const userCap = Number(b.response.headers.get('x-tollgate-max-tokens-capped'));
      assert.ok(userCap > 490 && userCap < 500, String(userCap));
      assert.equal(sim.requests.at(-1)!.body!.max_tokens, userCap);
    } finally {
      await tg.close();
    }
  });
});

describe('team limits and allow-list', () => {
  test('the team\'s rpm is shared by its members and its 429 names the team', async () => {
    const tg = await gateway();
    try {
      const { team: t, clients } = await team(tg, { rpm: 3 }, 2);
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await ask(clients[i % 2]!.client)).status);
      assert.deepEqual(statuses, [200, 200, 200]);
      const refused = await ask(clients[1]!.client);
      assert.equal(refused.status, 429);
      assert.match(refused.message, new RegExp(`per minute for your team "${t.name}"`));
      // A user outside the team is not limited by it.
      const outsider = await createGatewayUser(tg.gateway.store.db, { name: `outsider-${unique()}` });
      const key = await createApiKey(tg.gateway.store.db, { gatewayUserId: outsider.id });
      assert.equal((await ask(new OpenAI({ apiKey: key.key, baseURL: `${tg.gateway.origin}/api/v1`, maxRetries: 0 }))).status, 200);
    } finally {
      await tg.close();
    }
  });

  test('the team\'s model allow-list applies on top of the key\'s, and the log rows carry the team', async () => {
    const tg = await gateway();
    try {
      const { team: t, clients } = await team(tg, { models: ['openai/gpt-4o-mini'] }, 1);
      const allowed = await ask(clients[0]!.client);
      assert.equal(allowed.status, 200);
      const denied = await ask(clients[0]!.client, { model: 'openai/gpt-4o' });
      assert.equal(denied.status, 403);
      assert.match(denied.message, new RegExp(`Your team "${t.name}" may not use the model "openai/gpt-4o"`));
      await eventually(async () => {
        const rows = await tg.gateway.store.db.selectFrom('llm_requests').select(['team_id', 'status']).where('gateway_user_id', '=', clients[0]!.user.id).orderBy('id').execute();
        // Either row may be written first: the 200's is queued once its answer ended, which can be after the 403's.
        assert.deepEqual(rows.map((r) => [r.team_id, r.status]).sort((a, b) => a[1]! - b[1]!), [[t.id, 200], [t.id, 403]]);
      });
    } finally {
      await tg.close();
    }
  });
});
