/**
 * response-store (plugins/response-store/): retention (rows expire after `retentionDays` and the
 * sweep deletes them in batches), and billing of continuations: the budget reserves the whole
 * conversation `previous_response_id` expands to, and the turn is billed exactly at the upstream's usage.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { manualClock, startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { dataDirWithPrices } from '../helpers/prices.ts';
import { createGatewayUser } from '../../core/gateway-users.ts';
import { createApiKey } from '../../core/api-keys.ts';
import type { Store } from '../../core/db.ts';
import { tempDir } from '../helpers/tmp.ts';
import { openTestStore } from '../helpers/test-store.ts';
import { createResponseTable, sweepExpired } from '../../plugins/response-store/index.ts';
import type { NewStoredResponse } from '../../plugins/response-store/store.ts';
import { SIM_REPLY, SIM_USAGE, startAnthropicSimulator, type AnthropicSimulator } from '../helpers/anthropic-simulator.ts';

const DAY_MS = 86_400_000;
const MODEL = 'anthropic/claude-sonnet-4-5';

let anthropic: AnthropicSimulator;
before(async () => {
  anthropic = await startAnthropicSimulator();
});
after(async () => {
  await anthropic.close();
});

async function countRows(store: Store): Promise<number> {
  const row = await store.db.selectFrom('responses').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('retention', () => {
  const clock = manualClock(Date.parse('2026-03-01T00:00:00Z'));
  let tg: TestGateway;
  before(async () => {
    tg = await startTestGateway({
      clock,
      providers: { anthropic: { type: 'anthropic', baseUrl: anthropic.baseUrl, apiKey: 'sk-ant' } },
      // No background sweep: it would race the sweeps these tests run and count.
      config: { 'response-store': { retentionDays: 2, sweepIntervalMs: 0 } },
    });
  });
  after(() => tg.close());

  test('a response is readable for retentionDays, then unreadable, then swept', async () => {
    const created = await tg.client.responses.create({ model: MODEL, input: 'Remember me' });
    clock.advance(2 * DAY_MS - 1);
    assert.equal((await tg.client.responses.retrieve(created.id)).id, created.id);
    await tg.client.responses.create({ model: MODEL, input: 'Go on', previous_response_id: created.id, store: false });

    clock.advance(1);
    await assert.rejects(tg.client.responses.retrieve(created.id), OpenAI.NotFoundError);
    await assert.rejects(tg.client.responses.create({ model: MODEL, input: 'Go on', previous_response_id: created.id }), (err: unknown) =>
      err instanceof OpenAI.BadRequestError && (err.error as { code: string }).code === 'previous_response_not_found');
    assert.equal(await countRows(tg.gateway.store), 1, 'expired, not yet swept');

    const fresh = await tg.client.responses.create({ model: MODEL, input: 'Still here' });
    assert.equal(await sweepExpired(createResponseTable(tg.gateway.store), clock()), 1);
    assert.equal(await countRows(tg.gateway.store), 1);
    assert.equal((await tg.client.responses.retrieve(fresh.id)).id, fresh.id, 'the unexpired one stays');
  });

  test('the sweep deletes a large backlog in batches', async () => {
    // Its own database: the running gateway's sweeper (first run 1 s after boot) must not race this one.
    const store = await openTestStore(tempDir());
    const user = await createGatewayUser(store.db, { name: 'sweep-owner' });
    const table = createResponseTable(store);
    const nowMs = clock();
    for (let i = 0; i < 1203; i++) {
      await table.insert({
        gatewayUserId: user.id, id: `resp_old_${i}`, createdAtMs: nowMs - 10 * DAY_MS, expiresAtMs: nowMs - DAY_MS, model: MODEL, provider: 'anthropic',
        servedNatively: false, previousResponseId: null, inputItems: [], response: { id: `resp_old_${i}` },
      });
    }
    assert.equal(await countRows(store), 1203);
    const batches: number[] = [];
    const counting = { ...table, sweepBatch: async (ms: number, limit: number) => { const n = await table.sweepBatch(ms, limit); batches.push(n); return n; } };
    assert.equal(await sweepExpired(counting, nowMs, 500), 1203);
    assert.deepEqual(batches, [500, 500, 203]);
    assert.equal(await countRows(store), 0);
    await store.close();
  });
});

describe('the table, on the engine of this run', () => {
  const nowMs = Date.parse('2026-03-01T00:00:00Z');
  let store: Store;
  let userId: number;
  let otherId: number;
  before(async () => {
    store = await openTestStore(tempDir());
    userId = (await createGatewayUser(store.db, { name: 'owner' })).id;
    otherId = (await createGatewayUser(store.db, { name: 'other' })).id;
  });
  after(() => store.close());

  const row = (id: string, previousResponseId: string | null, itemIds: string[], expiresAtMs = nowMs + DAY_MS): NewStoredResponse => ({
    gatewayUserId: userId, id, createdAtMs: nowMs, expiresAtMs, model: MODEL, provider: 'anthropic', servedNatively: false,
    previousResponseId, inputItems: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: id }] }],
    response: { id, output: itemIds.map((itemId) => ({ id: itemId, type: 'message', content: [] })) },
  });

  test('a repeated id replaces the response and its item ids; a repeated item id points at the newer response', async () => {
    const table = createResponseTable(store);
    await table.insert(row('resp_same', null, ['msg_old', 'msg_kept']));
    await table.insert(row('resp_elsewhere', null, ['msg_moved']));
    await table.insert({ ...row('resp_same', null, ['msg_new', 'msg_kept', 'msg_moved', 'msg_new']), servedNatively: true });

    const stored = await table.find(userId, 'resp_same', nowMs);
    assert.equal(stored?.servedNatively, true);
    assert.deepEqual((stored?.response.output as { id: string }[]).map((item) => item.id), ['msg_new', 'msg_kept', 'msg_moved', 'msg_new']);
    const items = await table.findItems(userId, ['msg_old', 'msg_kept', 'msg_moved'], nowMs);
    assert.deepEqual([...items.keys()].sort(), ['msg_kept', 'msg_moved'], 'the replaced response\'s own item id is gone');
    assert.deepEqual(items.get('msg_kept'), { itemId: 'msg_kept', json: '{"id":"msg_kept","type":"message","content":[]}', responseId: 'resp_same', provider: 'anthropic', servedNatively: true });
    assert.equal(items.get('msg_moved')?.responseId, 'resp_same');
    assert.equal((await table.findItems(otherId, ['msg_kept'], nowMs)).size, 0, 'another user\'s item reads as missing');
  });

  test('a chain reads newest first and ends at an expired ancestor, at maxDepth and at a repeated id', async () => {
    const table = createResponseTable(store);
    await table.insert(row('resp_c0', null, [], nowMs));
    await table.insert(row('resp_c1', 'resp_c0', []));
    await table.insert(row('resp_c2', 'resp_c1', []));
    await table.insert(row('resp_c3', 'resp_c2', []));
    const ids = async (id: string, maxDepth: number) => (await table.chain(userId, id, nowMs, { maxDepth, maxBytes: 1e9 })).turns.map((turn) => turn.id);

    assert.deepEqual(await ids('resp_c3', 1000), ['resp_c3', 'resp_c2', 'resp_c1'], 'resp_c0 expired at nowMs');
    assert.deepEqual(await ids('resp_c3', 2), ['resp_c3', 'resp_c2']);
    assert.deepEqual(await ids('resp_c0', 1000), [], 'an expired start is not stored');
    assert.deepEqual(await table.chain(otherId, 'resp_c3', nowMs, { maxDepth: 1000, maxBytes: 1e9 }), { turns: [], overBytes: false });

    // An upstream that repeats ids can make a cycle: the walk stops where it comes round.
    await table.insert(row('resp_a', 'resp_b', []));
    await table.insert(row('resp_b', 'resp_a', []));
    assert.deepEqual(await ids('resp_a', 1000), ['resp_a', 'resp_b']);
  });

  test('remove deletes the caller\'s own unexpired response only', async () => {
    const table = createResponseTable(store);
    await table.insert(row('resp_gone', null, ['msg_gone']));
    assert.equal(await table.remove(otherId, 'resp_gone', nowMs), false);
    assert.equal(await table.remove(userId, 'resp_gone', nowMs), true);
    assert.equal(await table.remove(userId, 'resp_gone', nowMs), false);
    assert.equal((await table.findItems(userId, ['msg_gone'], nowMs)).size, 0);
  });
});

describe('billing a continuation', () => {
  let tg: TestGateway;
  // $100 per million tokens in and out: 100,000 nano-USD a token.
  const PRICE_NANOS = 100_000;
  before(async () => {
    tg = await startTestGateway({
      dataDir: await dataDirWithPrices([{ model: 'claude-sonnet-4-5', provider: 'anthropic', input: 100, output: 100 }]),
      providers: { anthropic: { type: 'anthropic', baseUrl: anthropic.baseUrl, apiKey: 'sk-ant' } },
    });
  });
  after(() => tg.close());

  /** A client for a fresh user with a $0.25 budget. */
  async function budgetedClient(name: string): Promise<OpenAI> {
    const user = await createGatewayUser(tg.gateway.store.db, { name: `${name}-${process.pid}`, budgetUsd: 0.25 });
    const key = await createApiKey(tg.gateway.store.db, { gatewayUserId: user.id, name });
    return new OpenAI({ apiKey: key.key, baseURL: `${tg.gateway.origin}/api/v1`, maxRetries: 0 });
  }

  const story = `Remember this story. ${'The quick brown fox jumps over the lazy dog. '.repeat(60)}`;

  /** Turn 1, settled (its log row written, so the budget has settled it too). */
  async function firstTurn(client: OpenAI) {
    const { data, response } = await client.responses.create({ model: MODEL, input: story }).withResponse();
    await tg.logRow(response.headers.get('x-request-id')!);
    return data;
  }

  /** The output cap the budget chose for a turn-2 request (it asks 4096 tokens, more than $0.25 pays for). */
  async function cappedTokens(client: OpenAI, body: OpenAI.Responses.ResponseCreateParamsNonStreaming) {
    const { data, response } = await client.responses.create(body).withResponse();
    return { data, capped: Number(response.headers.get('x-tollgate-max-tokens-capped')), requestId: response.headers.get('x-request-id')! };
  }

  test('reserves the whole conversation (the same cap as sending it all) and bills the upstream\'s usage exactly', async () => {
    const [continuing, explicit, alone] = await Promise.all([budgetedClient('continuing'), budgetedClient('explicit'), budgetedClient('alone')]);
    const [first] = await Promise.all([firstTurn(continuing), firstTurn(explicit), firstTurn(alone)]);

    const viaId = await cappedTokens(continuing, { model: MODEL, previous_response_id: first!.id, input: 'Retell it.' });
    const allSent = await cappedTokens(explicit, {
      model: MODEL,
      input: [
        { role: 'user', content: story },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: SIM_REPLY, annotations: [] }] } as unknown as OpenAI.Responses.ResponseInputItem,
        { role: 'user', content: 'Retell it.' },
      ],
    });
    const newInputOnly = await cappedTokens(alone, { model: MODEL, input: 'Retell it.' });

    assert.ok(viaId.capped > 0 && viaId.capped < 4096, String(viaId.capped));
    assert.equal(viaId.capped, allSent.capped);
    // The story is ~600 tokens: without it the budget would pay for that many more output tokens.
    assert.ok(newInputOnly.capped > viaId.capped + 500, `${newInputOnly.capped} vs ${viaId.capped}`);

    const row = await tg.logRow(viaId.requestId);
    const prompt = SIM_USAGE.input_tokens + SIM_USAGE.cache_creation_input_tokens + SIM_USAGE.cache_read_input_tokens;
    assert.equal(row.prompt_tokens, prompt);
    assert.equal(row.completion_tokens, SIM_USAGE.output_tokens);
    assert.equal(row.cost_nanos, prompt * PRICE_NANOS + SIM_USAGE.output_tokens * PRICE_NANOS);
    assert.deepEqual(viaId.data.usage, { ...viaId.data.usage, input_tokens: prompt, output_tokens: SIM_USAGE.output_tokens });
  });
});
