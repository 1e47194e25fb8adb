/**
 * kill -9 under load (issue 14 item 12): the spend persisted for a user always equals the costs of
 * their logged requests in the period, because a request's spend and its log row commit in the same
 * transaction of the write-behind queue. Whatever the crash loses (the last flush interval), it loses
 * both together.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { sql } from 'kysely';
import { openTestStore } from '../helpers/test-store.ts';
import { startOpenAISimulator } from '../helpers/openai-simulator.ts';
import { startGatewayProcess } from '../helpers/gateway-process.ts';
import { cliJson } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';

test('after kill -9 under load the persisted spend equals the logged costs of the period', async () => {
  const sim = await startOpenAISimulator();
  const dataDir = tempDir();
  await cliJson(['users', 'create', '--name', 'crash'], { dataDir });
  const { key } = await cliJson<{ key: string }>(['keys', 'create', '--user', 'crash'], { dataDir });
  const gateway = await startGatewayProcess({ dataDir, env: { OPENAI_BASE_URL: sim.baseUrl, OPENAI_API_KEY: 'sk-test' } });
  const client = new OpenAI({ apiKey: key, baseURL: gateway.baseURL, maxRetries: 0 });
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'hi' }];

  let completed = 0;
  let killed = false;
  const worker = async (n: number) => {
    for (let i = 0; !killed; i++) {
      try {
        if ((n + i) % 2 === 0) await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages });
        else for await (const _ of await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages, stream: true }));
        completed++;
      } catch {
        if (!killed) throw new Error('a request failed before the kill');
      }
    }
  };
  const workers = Array.from({ length: 16 }, (_, n) => worker(n));
  const enough = (async () => {
    while (completed < 150) await new Promise((r) => setTimeout(r, 5));
  })();
  // A worker that fails ends the wait (and the test) instead of leaving it waiting for 150.
  await Promise.race([enough, Promise.all(workers)]);
  killed = true;
  // Requests are in flight and settlements queued: nothing gets a chance to flush.
  await gateway.stop('SIGKILL');
  await Promise.allSettled(workers);
  await sim.close();

  const store = await openTestStore(dataDir);
  const user = await store.db.selectFrom('gateway_users').select(['id', 'budget_spent_nanos', 'budget_period_start']).where('name', '=', 'crash').executeTakeFirstOrThrow();
  const logged = await store.db.selectFrom('llm_requests')
    .select([sql<number>`count(*)`.as('n'), sql<number>`coalesce(sum(cost_nanos), 0)`.as('cost')])
    .where('gateway_user_id', '=', user.id).where('created_at', '>=', user.budget_period_start ?? '').executeTakeFirstOrThrow();
  await store.close();
  assert.ok(logged.n > 0 && logged.cost > 0, `requests were logged and priced (${logged.n} rows)`);
  assert.equal(user.budget_spent_nanos, logged.cost, `spend ${user.budget_spent_nanos} vs logged ${logged.cost} over ${logged.n} rows of ${completed} completed`);
  // The operator's check says the same.
  const verified = await cliJson<{ consistent: boolean }>(['ledger', 'verify'], { dataDir });
  assert.equal(verified.consistent, true);
});
