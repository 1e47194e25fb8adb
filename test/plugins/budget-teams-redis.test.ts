/**
 * Team budgets shared by three replicas (issue 43 item 1): three real `tollgate serve` processes on
 * one store (the run's: a SQLite file, or PostgreSQL with TOLLGATE_TEST_STORE=postgres) and one real
 * redis-server. Each member's request is reserved against the user's and the team's budget in ONE
 * Redis script, so the replicas together never pass the team's limit.
 *
 * Prices as test/plugins/budget-redis.test.ts: input free, output 1,000 USD per million tokens; with
 * `max_tokens` 24 a request reserves 24 output tokens and the simulator reports 24, so each served
 * request costs exactly 0.024 USD (24,000,000 nano-USD) and a team budget of 20 × 0.024 fits 20.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startOpenAISimulator, SIM_USAGE, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startReplicas, type GatewayProcess } from '../helpers/gateway-process.ts';
import { skipWithoutRedis, startRedisServer, type RedisServer } from '../helpers/redis-server.ts';
import { dataDirWithPrices } from '../helpers/prices.ts';
import { defaultManifest } from '../../core/default-manifest.ts';
import { openTestStore } from '../helpers/test-store.ts';
import { createGatewayUser } from '../../core/accounts/gateway-users.ts';
import { createApiKey } from '../../core/accounts/api-keys.ts';
import { addTeamMember, createTeam } from '../../core/accounts/teams.ts';

const skip = skipWithoutRedis();
const COST_NANOS = 24_000_000;

let sim: OpenAISimulator;
let redis: RedisServer;
let dataDir: string;
const replicas: GatewayProcess[] = [];
let teamId = 0;
let teamName = '';
const keys: string[] = [];

before(async () => {
  if (skip) return;
  [sim, redis] = await Promise.all([startOpenAISimulator(), startRedisServer()]);
  dataDir = await dataDirWithPrices([{ model: 'gpt-4o-mini', input: 0, output: 1_000 }]);
  const store = await openTestStore(dataDir);
  try {
    const team = await createTeam(store.db, { name: 'replicated-team', budgetUsd: (20 * COST_NANOS) / 1e9 });
    [teamId, teamName] = [team.id, team.name];
    for (let i = 0; i < 5; i++) {
      // Each member's own budget fits all 100 requests: only the team's can refuse.
      const user = await createGatewayUser(store.db, { name: `member-${i}`, budgetUsd: 10 });
      await addTeamMember(store.db, team.id, user.id);
      keys.push((await createApiKey(store.db, { gatewayUserId: user.id })).key);
    }
  } finally {
    await store.close();
  }
  const manifest = {
    ...defaultManifest,
    coordination: { redis: redis.url, budgetReservationTtlMs: 30_000, commandTimeoutMs: 5_000 },
    plugins: defaultManifest.plugins.map((p) => (p.name === 'rate-limit' ? { ...p, config: { defaultMaxConcurrent: null } } : p)),
  };
  const env = { OPENAI_BASE_URL: sim.baseUrl, OPENAI_API_KEY: 'sk-test' };
  await startReplicas(3, { dataDir, manifest, env }, replicas);
});

after(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await redis?.stop();
  await sim?.close();
});

async function chat(replica: GatewayProcess, key: string): Promise<{ status: number; message: string }> {
  const res = await fetch(`${replica.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'openai/gpt-4o-mini', max_tokens: 24, messages: [{ role: 'user', content: 'hi' }] }),
  });
  const body = (await res.json()) as { error?: { message: string } };
  return { status: res.status, message: body.error?.message ?? '' };
}

describe('team budgets shared by three replicas on one Redis', { skip }, () => {
  test('100 concurrent requests from 5 members on 3 replicas against a team budget of 20: exactly 20 served, the rest 402 naming the team, team spend = the limit', async () => {
    assert.equal(SIM_USAGE.completion_tokens, 24, 'the simulator bills the 24 output tokens reserved');
    // No warm-up: every budget is cold in Redis, so the burst's first requests seed the team's and
    // each member's spend concurrently on all three replicas; none of them may answer 503.
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => chat(replicas[i % 3]!, keys[i % 5]!)));
    const served = results.filter((r) => r.status === 200).length;
    const refused = results.filter((r) => r.status === 402);
    assert.equal(served + refused.length, 100, `unexpected: ${results.filter((r) => r.status !== 200 && r.status !== 402).map((r) => `${r.status} ${r.message}`).join('; ')}`);
    assert.ok(served <= 20, `served ${served}`);
    for (const r of refused) assert.match(r.message, new RegExp(`your team "${teamName}"`));
    // Every replica's write-behind reaches the store: the team's spend is what was served, never past the limit.
    const deadline = Date.now() + 30_000;
    let spent = -1;
    let logged = -1;
    while (Date.now() < deadline) {
      const store = await openTestStore(dataDir);
      try {
        spent = (await store.db.selectFrom('teams').select('budget_spent_nanos').where('id', '=', teamId).executeTakeFirstOrThrow()).budget_spent_nanos;
        logged = (await store.db.selectFrom('llm_requests').select('id').where('team_id', '=', teamId).execute()).length;
      } finally {
        await store.close();
      }
      if (logged === 100 && spent === served * COST_NANOS) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(logged, 100);
    assert.equal(spent, served * COST_NANOS);
    assert.ok(spent <= 20 * COST_NANOS);
    // Reservations are exact and each costs what it settles to: the 20 that fit are all served.
    assert.equal(served, 20);
  });
});
