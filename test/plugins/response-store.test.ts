/**
 * response-store (plugins/response-store/): retention (rows expire after `retentionDays` and the
 * sweep deletes them in batches), and billing of continuations: the budget reserves the whole
 * conversation `previous_response_id` expands to, and the turn is billed exactly at the upstream's usage.
 * The per-user quota (issue 39): `response_totals` kept by triggers, `overQuota` "refuse" (413) and
 * "expire-oldest", the store's size in /metrics, and schema version 15's backfill of older rows.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { manualClock, startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { dataDirWithPrices } from '../helpers/prices.ts';
import { createGatewayUser } from '../../core/accounts/gateway-users.ts';
import { createApiKey } from '../../core/accounts/api-keys.ts';
import type { Store } from '../../core/store/store.ts';
import { tempDir } from '../helpers/tmp.ts';
import { openTestStore } from '../helpers/test-store.ts';
import { createResponseTable, sweepExpired } from '../../plugins/response-store/index.ts';
import type { NewStoredResponse } from '../../plugins/response-store/store.ts';
import { readMigrations } from '../../core/store/store.ts';
import { openSqlite } from '../../core/store/driver-sqlite.ts';
import { TEST_STORE_ENGINE, testDatabaseUrl } from '../helpers/test-store.ts';
import pg from 'pg';
import { eventually } from '../helpers/eventually.ts';
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

  /** A fresh owner, with the same row maker. */
  async function freshOwner(name: string): Promise<number> {
    return (await createGatewayUser(store.db, { name })).id;
  }

  /** The owner's rows as the database counts them: what `response_totals` must equal. */
  async function counted(ownerId: number) {
    const row = await store.db.selectFrom('responses').where('gateway_user_id', '=', ownerId)
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.sum<number>('size_bytes').as('bytes')]).executeTakeFirstOrThrow();
    return { responseCount: Number(row.n), bytes: Number(row.bytes ?? 0) };
  }

  test('response_totals follow every insert, replacement, removal, sweep and the owner\'s deletion', async () => {
    const table = createResponseTable(store);
    const ownerId = await freshOwner('totals-owner');
    const mine = (id: string, itemIds: string[], expiresAtMs = nowMs + DAY_MS) => ({ ...row(id, null, itemIds, expiresAtMs), gatewayUserId: ownerId });
    await table.insert(mine('resp_t1', ['msg_t1']));
    await table.insert(mine('resp_t2', ['msg_t2', 'fc_t2']));
    const two = await table.totalsOf(ownerId);
    assert.deepEqual(two, await counted(ownerId));
    assert.equal(two.responseCount, 2);
    const sized = await store.db.selectFrom('responses').select('size_bytes').where('gateway_user_id', '=', ownerId).where('id', '=', 'resp_t1').executeTakeFirstOrThrow();
    const expected = JSON.stringify(mine('resp_t1', []).inputItems).length + JSON.stringify(mine('resp_t1', ['msg_t1']).response).length + '{"id":"msg_t1","type":"message","content":[]}'.length;
    assert.equal(Number(sized.size_bytes), expected, 'input items, response and its items, in bytes');

    await table.insert(mine('resp_t1', ['msg_t1', 'msg_t1b']));
    assert.deepEqual(await table.totalsOf(ownerId), await counted(ownerId), 'a replacement counts once');
    assert.equal((await table.totalsOf(ownerId)).responseCount, 2);
    assert.equal(await table.remove(ownerId, 'resp_t2', nowMs), true);
    assert.deepEqual(await table.totalsOf(ownerId), await counted(ownerId));
    await table.insert(mine('resp_t_old', [], nowMs - 1));
    assert.equal(await table.removeExpiredOf(ownerId, nowMs), 1);
    assert.deepEqual(await table.totalsOf(ownerId), await counted(ownerId));
    assert.equal((await table.totalsOf(ownerId)).responseCount, 1);

    const all = await store.db.selectFrom('responses').select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.sum<number>('size_bytes').as('bytes')]).executeTakeFirstOrThrow();
    assert.deepEqual(await table.totals(), { responseCount: Number(all.n), bytes: Number(all.bytes) });
    await store.db.deleteFrom('gateway_users').where('id', '=', ownerId).execute();
    assert.deepEqual(await table.totalsOf(ownerId), { responseCount: 0, bytes: 0 });
  });

  test('an insert with a quota deletes its owner\'s oldest responses until the new one fits, never another user\'s', async () => {
    const table = createResponseTable(store);
    const ownerId = await freshOwner('quota-owner');
    const bystanderId = await freshOwner('quota-bystander');
    const at = (id: string, ageMs: number, ownerOf = ownerId): NewStoredResponse => ({ ...row(id, null, [`msg_${id}`]), gatewayUserId: ownerOf, createdAtMs: nowMs - ageMs });
    await table.insert(at('resp_bystander', 10 * DAY_MS, bystanderId));
    for (const [id, ageMs] of [['resp_q_b', 3000], ['resp_q_a', 4000], ['resp_q_c', 2000]] as const) await table.insert(at(id, ageMs));
    const ids = async () => (await store.db.selectFrom('responses').select('id').where('gateway_user_id', '=', ownerId).orderBy('id').execute()).map((r) => r.id);

    await table.insert(at('resp_q_d', 1000), { maxResponses: 3, maxBytes: 1e9 });
    assert.deepEqual(await ids(), ['resp_q_b', 'resp_q_c', 'resp_q_d'], 'the oldest (resp_q_a) made room');
    const used = await table.totalsOf(ownerId);
    // Room for a response of the same size as the others takes deleting two of the three.
    await table.insert(at('resp_q_e', 0), { maxResponses: 100, maxBytes: Math.ceil(used.bytes / 3) * 2 });
    assert.deepEqual(await ids(), ['resp_q_d', 'resp_q_e']);
    assert.deepEqual(await table.totalsOf(ownerId), await counted(ownerId));
    assert.equal((await table.findItems(ownerId, ['msg_resp_q_a', 'msg_resp_q_d'], nowMs)).size, 1, 'an expired-out response takes its items along');
    assert.equal((await table.totalsOf(bystanderId)).responseCount, 1);
  });

  test('a chain stops reading at maxBytes, before the turn that passes it', async () => {
    const table = createResponseTable(store);
    await table.insert(row('resp_b0', null, []));
    await table.insert(row('resp_b1', 'resp_b0', []));
    await table.insert(row('resp_b2', 'resp_b1', []));
    const sizes = await store.db.selectFrom('responses').select(['id', 'size_bytes']).where('gateway_user_id', '=', userId).where('id', 'in', ['resp_b0', 'resp_b1', 'resp_b2']).execute();
    const total = sizes.reduce((sum, r) => sum + Number(r.size_bytes), 0);
    const read = (maxBytes: number) => table.chain(userId, 'resp_b2', nowMs, { maxDepth: 1000, maxBytes });
    const all = await read(total);
    assert.deepEqual([all.turns.map((t) => t.id), all.overBytes], [['resp_b2', 'resp_b1', 'resp_b0'], false]);
    const cut = await read(total - 1);
    assert.deepEqual([cut.turns.map((t) => t.id), cut.overBytes], [['resp_b2', 'resp_b1'], true]);
    const none = await read(1);
    assert.deepEqual([none.turns, none.overBytes], [[], true]);
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

    const viaId = await cappedTokens(continuing, { model: MODEL, previous_response_id: first.id, input: 'Retell it.' });
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

describe('the per-user quota', () => {
  const KIB = 1024;
  let refusing: TestGateway;
  let expiring: TestGateway;
  before(async () => {
    const providers = { anthropic: { type: 'anthropic', baseUrl: anthropic.baseUrl, apiKey: 'sk-ant' } };
    [refusing, expiring] = await Promise.all([
      startTestGateway({ providers, config: { 'response-store': { maxStoredResponsesPerUser: 2, maxStoredBytesPerUser: 64 * KIB, overQuota: 'refuse' } } }),
      startTestGateway({ providers, config: { 'response-store': { maxStoredResponsesPerUser: 3, maxStoredBytesPerUser: 64 * KIB } } }),
    ]);
  });
  after(() => Promise.all([refusing.close(), expiring.close()]));

  /** A client for a fresh user of `tg`, and its id. */
  async function userOf(tg: TestGateway, name: string): Promise<{ client: OpenAI; userId: number }> {
    const user = await createGatewayUser(tg.gateway.store.db, { name: `${name}-${process.pid}` });
    const key = await createApiKey(tg.gateway.store.db, { gatewayUserId: user.id, name });
    return { client: new OpenAI({ apiKey: key.key, baseURL: `${tg.gateway.origin}/api/v1`, maxRetries: 0 }), userId: user.id };
  }

  /** Asserts `promise` fails with the 413 of a full store, `used` as its message gives it. */
  async function rejectsFull(promise: Promise<unknown>, used: RegExp): Promise<void> {
    await assert.rejects(promise, (err: unknown) => {
      assert.ok(err instanceof OpenAI.APIError && err.status === 413, String(err));
      const body = err.error as { message: string; type: string; code: string; param: string | null };
      assert.deepEqual([body.type, body.code, body.param], ['invalid_request_error', 'response_store_full', null]);
      assert.match(body.message, used);
      assert.match(body.message, /Delete some \(DELETE \/api\/v1\/responses\/\{id\}\), wait until they expire, or send "store": false\.$/);
      return true;
    });
  }

  test('refuse: at the count quota a stored create gets 413 before the upstream; store: false still works, and a delete makes room', async () => {
    const { client } = await userOf(refusing, 'refused-count');
    const first = await client.responses.create({ model: MODEL, input: 'One' });
    await client.responses.create({ model: MODEL, input: 'Two' });
    const sent = anthropic.requests.length;
    await rejectsFull(client.responses.create({ model: MODEL, input: 'Three' }), /^Your stored responses fill your quota \(2 responses of 2\)/);
    assert.equal(anthropic.requests.length, sent, 'refused before the upstream');
    assert.equal((await client.responses.create({ model: MODEL, input: 'Unkept', store: false })).output_text, SIM_REPLY);
    await client.responses.delete(first.id);
    assert.equal((await client.responses.create({ model: MODEL, input: 'Three' })).output_text, SIM_REPLY);
  });

  test('refuse: bytes count too, metadata included; the response that crosses the quota is kept', async () => {
    const { client } = await userOf(refusing, 'refused-bytes');
    const big = await client.responses.create({ model: MODEL, input: 'Heavy', metadata: { blob: 'm'.repeat(70 * KIB) } });
    assert.equal((await client.responses.retrieve(big.id)).id, big.id);
    await rejectsFull(client.responses.create({ model: MODEL, input: 'More' }), /^Your stored responses fill your quota \(\d+ bytes of 65536\)/);
  });

  test('expire-oldest: a new response deletes the oldest until it fits, by count and by bytes', async () => {
    const { client, userId } = await userOf(expiring, 'expiring');
    const ids: string[] = [];
    for (const input of ['One', 'Two', 'Three', 'Four']) ids.push((await client.responses.create({ model: MODEL, input })).id);
    await assert.rejects(client.responses.retrieve(ids[0]!), OpenAI.NotFoundError);
    for (const id of ids.slice(1)) assert.equal((await client.responses.retrieve(id)).id, id);

    // ~31 KiB each: two fit 64 KiB, the third makes room by deleting the oldest two's first.
    const heavy: string[] = [];
    for (const input of ['A', 'B', 'C']) heavy.push((await client.responses.create({ model: MODEL, input, metadata: { blob: 'm'.repeat(30 * KIB) } })).id);
    await assert.rejects(client.responses.retrieve(heavy[0]!), OpenAI.NotFoundError);
    for (const id of heavy.slice(1)) assert.equal((await client.responses.retrieve(id)).id, id);
    const table = createResponseTable(expiring.gateway.store);
    const used = await table.totalsOf(userId);
    assert.ok(used.bytes <= 64 * KIB && used.responseCount <= 3, JSON.stringify(used));
  });

  test('expire-oldest: a response larger than the byte quota on its own is not stored and deletes none of the user\'s responses', async () => {
    const { client, userId } = await userOf(expiring, 'too-large');
    const kept = (await client.responses.create({ model: MODEL, input: 'Keep me' })).id;
    const table = createResponseTable(expiring.gateway.store);
    const before = await table.totalsOf(userId);
    // Answered 200 (its size is known only once the answer is under way), but not kept.
    const huge = await client.responses.create({ model: MODEL, input: 'Huge', metadata: { blob: 'm'.repeat(70 * KIB) } });
    assert.equal(huge.output_text, SIM_REPLY);
    await assert.rejects(client.responses.retrieve(huge.id), OpenAI.NotFoundError);
    assert.equal((await client.responses.retrieve(kept)).id, kept, 'the older response stays');
    assert.deepEqual(await table.totalsOf(userId), before);
    assert.ok(expiring.serverLog.some((line) => line.includes('larger than maxStoredBytesPerUser') && line.includes(huge.id)));
  });

  test('/metrics reports the store\'s size: responses and bytes, every user together', async () => {
    const { client } = await userOf(expiring, 'metered');
    await client.responses.create({ model: MODEL, input: 'Count me' });
    const res = await fetch(`${expiring.gateway.origin}/metrics`);
    const text = await res.text();
    const gauge = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(text)?.[1]);
    const all = await expiring.gateway.store.db.selectFrom('responses')
      .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.sum<number>('size_bytes').as('bytes')]).executeTakeFirstOrThrow();
    assert.ok(Number(all.n) > 0);
    assert.equal(gauge('tollgate_stored_responses'), Number(all.n));
    assert.equal(gauge('tollgate_stored_responses_bytes'), Number(all.bytes));
  });
});

describe('storing while another process holds SQLite\'s write lock', { skip: TEST_STORE_ENGINE === 'postgres' ? 'about the SQLite store; this run puts gateways on PostgreSQL' : false }, () => {
  test('the insert waits for the lock (a CLI command\'s transaction) instead of losing the response: it can be continued afterwards', async () => {
    const tg = await startTestGateway({ providers: { anthropic: { type: 'anthropic', baseUrl: anthropic.baseUrl, apiKey: 'sk-ant' } } });
    const other = openSqlite(tg.gateway.store.location);
    try {
      // The key is read (and cached) and the first row written while the file is writable.
      const warm = await tg.client.responses.create({ model: MODEL, input: 'Warm up', store: false });
      await tg.logRow(warm._request_id!);
      other.exec('BEGIN EXCLUSIVE');
      const pending = tg.client.responses.create({ model: MODEL, input: 'Remember me' });
      // Released once the gateway has met the lock storing the response (longer than its 5 ms wait).
      await eventually(async () => assert.ok(tg.serverLog.some((line) => line.includes('response-store')), 'the insert met the lock'));
      other.exec('COMMIT');
      const created = await pending;
      const next = await tg.client.responses.create({ model: MODEL, input: 'Go on', previous_response_id: created.id, store: false });
      assert.equal(next.output_text, SIM_REPLY);
    } finally {
      if (other.inTransaction) other.exec('ROLLBACK');
      other.close();
      await tg.close();
    }
  });
});

describe('schema version 15, on the engine of this run', () => {
  const RESPONSE = JSON.stringify({
    id: 'resp_v14', metadata: { note: 'nul \u0000 and é' },
    output: [
      { id: 'msg_v14', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'héllo' }] },
      { id: 'fc_v14', type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' },
      { id: 'msg_v14', type: 'message', role: 'assistant', content: [] },
    ],
  });
  const INPUT = '[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}]';
  const byteLength = (text: string) => Buffer.byteLength(text);

  /** Runs `statements` on a fresh database of this run's engine, migrated to `upTo`; then `then`. */
  async function onVersion(upTo: number, seed: (exec: (sqlText: string, params?: unknown[]) => Promise<void>) => Promise<void>): Promise<Record<string, unknown[]>> {
    const tables = ['responses', 'response_items', 'response_totals'];
    const out: Record<string, unknown[]> = {};
    if (TEST_STORE_ENGINE === 'sqlite') {
      const db = openSqlite(`${tempDir()}/v14.db`);
      db.pragma('foreign_keys = ON');
      const migrations = readMigrations('sqlite');
      for (const m of migrations.filter((m) => m.version <= upTo)) db.exec(m.sql);
      await seed(async (sqlText, params = []) => void db.prepare(sqlText.replace(/\$\d+/g, '?')).run(...params));
      for (const m of migrations.filter((m) => m.version > upTo)) db.exec(m.sql);
      for (const table of tables) out[table] = db.prepare(`SELECT * FROM ${table}`).all();
      db.close();
      return out;
    }
    const client = new pg.Client({ connectionString: (await testDatabaseUrl(tempDir()))! });
    await client.connect();
    try {
      const migrations = readMigrations('postgres');
      for (const m of migrations.filter((m) => m.version <= upTo)) await client.query(m.sql);
      await seed(async (sqlText, params = []) => void (await client.query(sqlText, params)));
      for (const m of migrations.filter((m) => m.version > upTo)) await client.query(m.sql);
      for (const table of tables) out[table] = (await client.query(`SELECT * FROM ${table}`)).rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'string' && /^\d+$/.test(v) && k !== 'item_id' ? Number(v) : v])));
      return out;
    } finally {
      await client.end();
    }
  }

  test('fills the items, sizes and totals of responses stored before it; an item it cannot find again is dropped', async () => {
    const after = await onVersion(14, async (exec) => {
      await exec("INSERT INTO gateway_users (name, created_at, updated_at) VALUES ('old-owner', 'x', 'x')");
      await exec(`INSERT INTO responses (gateway_user_id, id, created_at, expires_at, model, provider, served_natively, previous_response_id, input_items, response)
        VALUES (1, 'resp_v14', '2026-01-01T00:00:00.000Z', '2099-01-01T00:00:00.000Z', 'm', 'anthropic', 0, NULL, $1, $2)`, [INPUT, RESPONSE]);
      await exec("INSERT INTO response_items (gateway_user_id, item_id, response_id) VALUES (1, 'msg_v14', 'resp_v14'), (1, 'fc_v14', 'resp_v14'), (1, 'msg_gone', 'resp_v14')");
    });
    const items = (after.response_items as Array<{ item_id: string; item: string }>).sort((a, b) => a.item_id.localeCompare(b.item_id));
    assert.deepEqual(items.map((i) => i.item_id), ['fc_v14', 'msg_v14']);
    const output = (JSON.parse(RESPONSE) as { output: unknown[] }).output;
    assert.deepEqual(items.map((i) => JSON.parse(i.item)), [output[1], output[0]], 'the first item with the id, as stored');
    const [stored] = after.responses as Array<{ size_bytes: number }>;
    assert.equal(stored!.size_bytes, byteLength(INPUT) + byteLength(RESPONSE) + items.reduce((sum, i) => sum + byteLength(i.item), 0));
    assert.deepEqual(after.response_totals, [{ gateway_user_id: 1, response_count: 1, bytes: stored!.size_bytes }]);
  });
});
