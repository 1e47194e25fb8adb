/**
 * Budgets shared by replicas, the race between a status read and the atomic reservation: replica A
 * reads a user's budget and plans a short prompt's reservation on its byte bound, replica B serves a
 * request for the same user before A's reservation reaches Redis, and Redis then refuses A's bound.
 * A plans again with the prompt's count on the counts Redis answered with and is served: the count
 * fits what B left (plugins/budget `recount`). Without that second plan A's client got 402 for a
 * request its budget pays for.
 *
 * Two gateways in this process on one data directory and one real redis-server; A reaches Redis
 * through a TCP relay that holds its connection's reservation script (matched by the script's SHA-1,
 * as `redis-connection.ts` sends it with EVALSHA) until B's request is served.
 *
 * Prices: input 1,000 USD per million tokens (1,000,000 nano-USD a token), output free, so a
 * reservation is the prompt's tokens × 1,000,000 nano-USD. The budget is exactly A's byte bound
 * (read from the `x-ratelimit-remaining-tokens` of the same request by a user with a token limit).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { skipWithoutRedis, startRedisServer, type RedisServer, untilSharedStoreReady } from '../helpers/redis-server.ts';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { dataDirWithPrices } from '../helpers/prices.ts';
import { createGatewayUser } from '../../core/accounts/gateway-users.ts';
import { createApiKey } from '../../core/accounts/api-keys.ts';
import { BUDGET_RESERVE } from '../../core/coordination/budget-scripts.ts';
import { eventually } from '../helpers/eventually.ts';
import { usd } from '../../core/money/money.ts';

const skip = skipWithoutRedis();
const NANOS_PER_TOKEN = 1_000_000;
const RESERVE_SHA = createHash('sha1').update(BUDGET_RESERVE).digest('hex');
// ~1,350 UTF-8 bytes of English: below the byte-bound maximum (2,048), ~300 tokens counted.
const LONG_PROMPT = 'The quick brown fox jumps over the lazy dog. '.repeat(30);

/**
 * A TCP relay to Redis that, once `holdNext()` is called, holds the first client chunk carrying the
 * budget's reservation script (and everything after it on that connection) until `release()`.
 */
interface HoldingRelay {
  readonly url: string;
  /** Resolves when a reservation is held. */
  holdNext(): Promise<void>;
  release(): void;
  close(): Promise<void>;
}

async function startHoldingRelay(redisPort: number): Promise<HoldingRelay> {
  let armed: (() => void) | null = null;
  const held: Array<() => void> = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = connect(redisPort, '127.0.0.1');
    sockets.add(client).add(upstream);
    let holding = false;
    const queue: Buffer[] = [];
    client.on('data', (chunk: Buffer) => {
      if (!holding && armed && chunk.includes(RESERVE_SHA)) {
        holding = true;
        const heldNow = armed;
        armed = null;
        held.push(() => {
          holding = false;
          for (const part of queue.splice(0)) upstream.write(part);
        });
        heldNow();
      }
      if (holding) queue.push(chunk);
      else upstream.write(chunk);
    });
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    holdNext: () => new Promise<void>((resolve) => (armed = resolve)),
    release: () => {
      for (const resume of held.splice(0)) resume();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

let sim: OpenAISimulator;
let redis: RedisServer;
let relay: HoldingRelay;
let replicaA: TestGateway;
let replicaB: TestGateway;

/** Manifest `coordination` over `url`: long command timeouts, since A's reservation is held on purpose. */
const coordination = (url: string) => ({ redis: url, commandTimeoutMs: 10_000 });

before(async () => {
  if (skip) return;
  [sim, redis] = await Promise.all([startOpenAISimulator(), startRedisServer()]);
  relay = await startHoldingRelay(redis.port);
  const dataDir = await dataDirWithPrices([{ model: 'gpt-4o-mini', input: 1_000, output: 0 }]);
  const options = {
    providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-test' } },
    dataDir,
    // No concurrency limit: the rate limit asks Redis only for the token limit of the calibration user.
    config: { 'rate-limit': { defaultMaxConcurrent: null } },
  };
  replicaA = await startTestGateway({ ...options, coordination: coordination(relay.url) });
  replicaB = await startTestGateway({ ...options, coordination: coordination(redis.url) });
  await untilSharedStoreReady([replicaA.gateway.origin, replicaB.gateway.origin]);
});

after(async () => {
  relay?.release();
  await replicaA?.close();
  await replicaB?.close();
  await relay?.close();
  await redis?.stop();
  await sim?.close();
});

/** A user of the shared database with `fields`, and a key for it. */
async function user(fields: Parameters<typeof createGatewayUser>[1]): Promise<{ key: string; userId: number }> {
  const created = await createGatewayUser(replicaA.gateway.store.db, fields);
  return { key: (await createApiKey(replicaA.gateway.store.db, { gatewayUserId: created.id, name: 'k' })).key, userId: created.id };
}

function chat(replica: TestGateway, key: string, content: string): Promise<Response> {
  return fetch(`${replica.gateway.origin}/api/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'openai/gpt-4o-mini', max_tokens: 1, messages: [{ role: 'user', content }] }),
  });
}

describe('a shared budget when another replica reserves between the status read and the reservation', { skip }, () => {
  test('the byte bound Redis refuses is planned again with the count, which fits what is left: served, not 402', async () => {
    // The prompt's byte bound: what a token limit reserves for it, less max_tokens (1).
    const tpm = 10_000_000;
    const probe = await chat(replicaA, (await user({ name: 'probe', tpm })).key, LONG_PROMPT);
    assert.equal(probe.status, 200);
    const boundTokens = tpm - Number(probe.headers.get('x-ratelimit-remaining-tokens')) - 1;
    assert.ok(boundTokens >= LONG_PROMPT.length, `the bound (${boundTokens}) counts every byte`);

    const { key, userId } = await user({ name: 'racer', budgetUsd: boundTokens / 1_000, budgetPeriod: 'monthly' });
    const held = relay.holdNext();
    const answerA = chat(replicaA, key, LONG_PROMPT);
    await held;
    // While A's reservation of its whole budget waits, B serves the same user: its own short prompt's
    // reservation fits, and then A's bound no longer does.
    const b = await chat(replicaB, key, 'hi');
    assert.equal(b.status, 200, await b.clone().text());
    relay.release();
    const a = await answerA;
    assert.equal(a.status, 200, await a.clone().text());
    const body = (await a.json()) as { choices: unknown[] };
    assert.equal(body.choices.length, 1);
    assert.equal(a.headers.get('x-tollgate-max-tokens-capped'), null);

    // Both settled at their logged costs: the user's spend is their sum, within the budget.
    const [rowA, rowB] = await Promise.all([replicaA.logRow(a.headers.get('x-request-id')!), replicaB.logRow(b.headers.get('x-request-id')!)]);
    assert.deepEqual([rowA.status, rowB.status], [200, 200]);
    const spentNanos = rowA.cost_nanos! + rowB.cost_nanos!;
    assert.ok(spentNanos > 0 && spentNanos <= boundTokens * NANOS_PER_TOKEN, `spent ${spentNanos} nano-USD`);
    // Each replica adds its own settlements to the stored spend (written behind).
    await eventually(async () => {
      const row = await replicaA.gateway.store.db.selectFrom('gateway_users').select('budget_spent_nanos').where('id', '=', userId).executeTakeFirstOrThrow();
      assert.equal(row.budget_spent_nanos, spentNanos);
    });
    // Either replica's GET /api/account shows both: the shared counts, not the replica's own
    // settlements on top of the row it read (on PostgreSQL nothing tells a replica that another one
    // wrote the row; on SQLite the file's change poll would catch up a moment later).
    for (const replica of [replicaA, replicaB]) {
      const account = await fetch(`${replica.gateway.origin}/api/account`, { headers: { authorization: `Bearer ${key}` } });
      const { budget } = (await account.json()) as { budget: { spent_usd: number; reserved_usd: number; remaining_usd: number } };
      assert.deepEqual(budget, { ...budget, spent_usd: usd(spentNanos), reserved_usd: 0, remaining_usd: usd(boundTokens * NANOS_PER_TOKEN - spentNanos) });
    }
  });
});
