/**
 * Gateway-kept Responses state (plugin response-store) through the official `openai` SDK:
 * `responses.create` / `.stream` / `retrieve` / `delete` / `inputItems.list`, and
 * `previous_response_id` on translated (Anthropic, Gemini) and native (OpenAI Responses simulator)
 * upstreams, also when a conversation moves between them; each user sees only their own responses.
 * `item_reference`s are bounded (how many, how many bytes they expand to, one lookup per item) and
 * an item the gateway does not hold goes upstream only with the user's own credential (issue 39).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { createGatewayUser } from '../../core/accounts/gateway-users.ts';
import { createApiKey } from '../../core/accounts/api-keys.ts';
import { RESPONSES_REPLY, startResponsesSimulator, type ResponsesSimulator } from '../helpers/openai-responses-simulator.ts';
import { SIM_REPLY as ANTHROPIC_REPLY, SIM_TOOL_ANSWER, startAnthropicSimulator, type AnthropicSimulator } from '../helpers/anthropic-simulator.ts';
import { SIM_REPLY as GEMINI_REPLY, startGeminiSimulator, type GeminiSimulator } from '../helpers/gemini-simulator.ts';
import { createResponseTable } from '../../plugins/response-store/index.ts';
import { loginAdmin } from '../helpers/admin-client.ts';

let openai: ResponsesSimulator;
let anthropic: AnthropicSimulator;
let gemini: GeminiSimulator;
let tg: TestGateway;
let client: OpenAI;
/** A second gateway user's client. */
let other: OpenAI;

before(async () => {
  [openai, anthropic, gemini] = await Promise.all([startResponsesSimulator(), startAnthropicSimulator(), startGeminiSimulator()]);
  tg = await startTestGateway({
    providers: {
      openai: { type: 'openai', baseUrl: openai.baseUrl, apiKey: 'sk-openai' },
      anthropic: { type: 'anthropic', baseUrl: anthropic.baseUrl, apiKey: 'sk-ant' },
      gemini: { type: 'gemini', baseUrl: gemini.baseUrl, apiKey: 'gm-key' },
    },
  });
  client = tg.client;
  const user = await createGatewayUser(tg.gateway.store.db, { name: `other-${process.pid}` });
  const key = await createApiKey(tg.gateway.store.db, { gatewayUserId: user.id, name: 'other' });
  other = new OpenAI({ apiKey: key.key, baseURL: `${tg.gateway.origin}/api/v1`, maxRetries: 0 });
});
after(async () => {
  await tg.close();
  await Promise.all([openai.close(), anthropic.close(), gemini.close()]);
});

/** GET `path` on the gateway with the first user's key; the JSON body (asserting 200). */
async function getJson(path: string): Promise<unknown> {
  const res = await fetch(`${tg.gateway.origin}${path}`, { headers: { authorization: `Bearer ${tg.apiKey}` } });
  assert.equal(res.status, 200, await res.clone().text());
  return res.json();
}

/** Asserts `promise` fails with OpenAI's 404 for response `id`. */
async function rejectsNotFound(promise: Promise<unknown>, id: string): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof OpenAI.NotFoundError, String(err));
    assert.deepEqual(err.error, { message: `Response with id '${id}' not found.`, type: 'invalid_request_error', code: 'response_not_found', param: null });
    return true;
  });
}

/** Asserts `promise` fails as OpenAI fails an unknown `previous_response_id`. */
async function rejectsPreviousNotFound(promise: Promise<unknown>, id: string): Promise<void> {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof OpenAI.BadRequestError, String(err));
    assert.deepEqual(err.error, { message: `Previous response with id '${id}' not found.`, type: 'invalid_request_error', code: 'previous_response_not_found', param: 'previous_response_id' });
    return true;
  });
}

/** The texts of a Gemini request's `contents`, as `role: text` lines. */
function geminiTurns(body: Record<string, unknown>): string[] {
  return (body.contents as Array<{ role: string; parts: Array<{ text?: string }> }>).map((c) => `${c.role}: ${c.parts.map((p) => p.text ?? '').join('')}`);
}

/** The texts of an Anthropic request's `messages`, as `role: text` lines (tool blocks as `[type id]`). */
function anthropicTurns(body: Record<string, unknown>): string[] {
  return (body.messages as Array<{ role: string; content: string | Array<Record<string, unknown>> }>).map((m) => {
    const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    return `${m.role}: ${blocks.map((b) => (b.type === 'text' ? String(b.text) : `[${String(b.type)} ${String(b.id ?? b.tool_use_id)}]`)).join(' ')}`;
  });
}

describe('stored responses', () => {
  test('retrieve answers the very response create gave, translated and native', async () => {
    for (const model of ['anthropic/claude-sonnet-4-5', 'openai/gpt-5-mini']) {
      const created = await client.responses.create({ model, input: 'Say hello' });
      assert.equal((created as unknown as { store: boolean }).store, true);
      assert.deepEqual(await client.responses.retrieve(created.id), created);
    }
  });

  test('a streamed response is stored as its response.completed event carried it', async () => {
    for (const model of ['gemini/gemini-2.5-flash', 'openai/gpt-5-mini']) {
      const stream = client.responses.stream({ model, input: 'Say hello' });
      let completed: unknown;
      stream.on('response.completed', (event) => (completed = structuredClone(event.response)));
      await stream.finalResponse();
      const { id } = completed as { id: string };
      assert.deepEqual(await getJson(`/api/v1/responses/${id}`), completed);
    }
  });

  test('store: false keeps nothing', async () => {
    const created = await client.responses.create({ model: 'anthropic/claude-sonnet-4-5', input: 'Forget me', store: false });
    assert.equal((created as unknown as { store: boolean }).store, false);
    await rejectsNotFound(client.responses.retrieve(created.id), created.id);
    await rejectsPreviousNotFound(client.responses.create({ model: 'anthropic/claude-sonnet-4-5', input: 'Go on', previous_response_id: created.id }), created.id);
  });

  test('delete removes it: retrieve, input_items and previous_response_id no longer find it', async () => {
    const created = await client.responses.create({ model: 'anthropic/claude-sonnet-4-5', input: 'Say hello' });
    const res = await fetch(`${tg.gateway.origin}/api/v1/responses/${created.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${tg.apiKey}` } });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { id: created.id, object: 'response', deleted: true });
    await rejectsNotFound(client.responses.retrieve(created.id), created.id);
    await rejectsNotFound(client.responses.inputItems.list(created.id), created.id);
    await rejectsNotFound(client.responses.delete(created.id), created.id);
  });

  test('retrieve, delete and input_items are not model calls: no request-log rows', async () => {
    const { data: created } = await client.responses.create({ model: 'anthropic/claude-sonnet-4-5', input: 'Say hello' }).withResponse();
    await client.responses.retrieve(created.id);
    await client.responses.inputItems.list(created.id);
    await client.responses.delete(created.id);
    // The log is written in order: once a later model call's row is there, earlier rows would be too.
    const { response: later } = await client.responses.create({ model: 'anthropic/claude-sonnet-4-5', input: 'Later' }).withResponse();
    await tg.logRow(later.headers.get('x-request-id')!);
    const rows = await tg.gateway.store.db.selectFrom('llm_requests').select('endpoint').where('endpoint', 'like', 'responses.%').execute();
    assert.deepEqual([...new Set(rows.map((row) => row.endpoint))], ['responses.create']);
  });

  test('another user\'s response is a 404 everywhere, and unknown as previous_response_id', async () => {
    const mine = await client.responses.create({ model: 'anthropic/claude-sonnet-4-5', input: 'Private' });
    await rejectsNotFound(other.responses.retrieve(mine.id), mine.id);
    await rejectsNotFound(other.responses.inputItems.list(mine.id), mine.id);
    await rejectsNotFound(other.responses.delete(mine.id), mine.id);
    await rejectsPreviousNotFound(other.responses.create({ model: 'anthropic/claude-sonnet-4-5', input: 'Go on', previous_response_id: mine.id }), mine.id);
    assert.equal((await client.responses.retrieve(mine.id)).id, mine.id, 'the owner still has it');
  });

  test('input_items lists the request\'s own items, newest first by default, paged with after and before', async () => {
    const input = ['one', 'two', 'three', 'four', 'five'].map((text) => ({ role: 'user' as const, content: text }));
    const created = await client.responses.create({ model: 'anthropic/claude-sonnet-4-5', input });
    const texts = (items: Array<{ type: string }>) => items.map((item) => (item as unknown as { content: Array<{ text: string }> }).content[0]!.text);

    const page = await client.responses.inputItems.list(created.id, { limit: 2 });
    assert.deepEqual(texts(page.data), ['five', 'four']);
    assert.equal(page.has_more, true);
    assert.ok(page.data.every((item) => item.type === 'message' && typeof item.id === 'string' && item.id.startsWith('msg_') && item.status === 'completed'));
    const all: string[] = [];
    for await (const item of client.responses.inputItems.list(created.id, { limit: 2, order: 'asc' })) all.push(texts([item])[0]!);
    assert.deepEqual(all, ['one', 'two', 'three', 'four', 'five'], 'the SDK pages through with after');

    const asc = await client.responses.inputItems.list(created.id, { order: 'asc' });
    assert.deepEqual(texts(asc.data), ['one', 'two', 'three', 'four', 'five']);
    assert.deepEqual(asc.data.map((item) => item.id), (await client.responses.inputItems.list(created.id, { order: 'asc' })).data.map((item) => item.id), 'ids are stable');
    const before = (await getJson(`/api/v1/responses/${created.id}/input_items?order=asc&limit=2&before=${asc.data[3]!.id}`)) as {
      data: Array<{ type: string }>; has_more: boolean; first_id: string; last_id: string;
    };
    assert.deepEqual(texts(before.data), ['two', 'three']);
    assert.deepEqual([before.first_id, before.last_id, before.has_more], [asc.data[1]!.id, asc.data[2]!.id, true]);

    await assert.rejects(client.responses.inputItems.list(created.id, { limit: 101 }), (err: unknown) => err instanceof OpenAI.BadRequestError && (err.error as { param: string }).param === 'limit');
  });
});

describe('previous_response_id', () => {
  test('continues a conversation on another provider: Gemini receives the turns Anthropic served', async () => {
    const first = await client.responses.create({ model: 'anthropic/claude-sonnet-4-5', instructions: 'Be terse.', input: 'My name is Ada.' });
    const second = await client.responses.create({ model: 'gemini/gemini-2.5-flash', previous_response_id: first.id, input: 'What is my name?' });
    assert.equal(second.output_text, GEMINI_REPLY);
    assert.equal(second.previous_response_id, first.id);
    const sent = gemini.chatRequests().at(-1)!.body!;
    assert.deepEqual(geminiTurns(sent), ['user: My name is Ada.', `model: ${ANTHROPIC_REPLY}`, 'user: What is my name?']);
    assert.equal(sent.systemInstruction, undefined, 'the earlier instructions are not carried over');
    assert.deepEqual((await client.responses.inputItems.list(second.id)).data.map((item) => item.type), ['message'], 'input_items holds the request\'s own input only');

    // A third turn, back on Anthropic, replays both earlier turns.
    await client.responses.create({ model: 'anthropic/claude-sonnet-4-5', previous_response_id: second.id, input: 'Thanks.' });
    assert.deepEqual(anthropicTurns(anthropic.lastMessages().body!), [
      'user: My name is Ada.', `assistant: ${ANTHROPIC_REPLY}`, 'user: What is my name?', `assistant: ${GEMINI_REPLY}`, 'user: Thanks.',
    ]);
  });

  test('works as soon as a streamed turn\'s final event arrives', async () => {
    for (const model of ['anthropic/claude-sonnet-4-5', 'openai/gpt-5-mini']) {
      const stream = client.responses.stream({ model, input: 'Count to three.' });
      const continued = new Promise<OpenAI.Responses.Response>((resolve, reject) => {
        stream.on('response.completed', (event) => {
          client.responses.create({ model: 'anthropic/claude-sonnet-4-5', previous_response_id: event.response.id, input: 'Again.' }).then(resolve, reject);
        });
      });
      await stream.finalResponse();
      assert.equal((await continued).output_text, ANTHROPIC_REPLY);
      assert.equal(anthropicTurns(anthropic.lastMessages().body!)[0], 'user: Count to three.');
    }
  });

  test('a function-call loop: turn 2 sends only the outputs, the translated upstream gets calls and results paired', async () => {
    const tools = [{ type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];
    const first = await client.responses.create({ model: 'anthropic/sim-tool', input: 'Weather in Paris and London?', tools });
    const calls = first.output.filter((item) => item.type === 'function_call');
    assert.equal(calls.length, 2);
    const second = await client.responses.create({
      model: 'anthropic/sim-tool', tools, previous_response_id: first.id,
      input: calls.map((call) => ({ type: 'function_call_output' as const, call_id: call.call_id, output: '18 °C' })),
    });
    assert.equal(second.output_text, SIM_TOOL_ANSWER);
    assert.deepEqual(anthropicTurns(anthropic.lastMessages().body!), [
      'user: Weather in Paris and London?',
      'assistant: Let me check. [tool_use toolu_sim_paris] [tool_use toolu_sim_london]',
      'user: [tool_result toolu_sim_paris] [tool_result toolu_sim_london]',
    ]);
  });

  test('a native OpenAI parent continued natively goes upstream unchanged, with its previous_response_id', async () => {
    const first = await client.responses.create({ model: 'openai/gpt-5-mini', input: 'Hi' });
    const body = { model: 'openai/gpt-5-mini', previous_response_id: first.id, input: 'Go on' };
    await client.responses.create(body);
    assert.deepEqual(openai.requests.at(-1)!.body, { ...body, model: 'gpt-5-mini' });
  });

  test('a translated parent continued on OpenAI natively is sent as the whole conversation, without the id OpenAI lacks', async () => {
    const first = await client.responses.create({ model: 'anthropic/claude-sonnet-4-5', input: 'My name is Ada.' });
    const second = await client.responses.create({ model: 'openai/gpt-5-mini', previous_response_id: first.id, input: 'What is my name?', store: false });
    assert.equal(second.output_text, RESPONSES_REPLY);
    const sent = openai.requests.at(-1)!.body!;
    assert.equal(sent.previous_response_id, undefined);
    assert.deepEqual(sent.input, [
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'My name is Ada.' }] },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: ANTHROPIC_REPLY }] },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'What is my name?' }] },
    ]);
    assert.equal(sent.store, false);
  });

  test('a native parent continued on a translated provider replays OpenAI\'s answer', async () => {
    const first = await client.responses.create({ model: 'openai/gpt-5-mini', input: 'Hi' });
    await client.responses.create({ model: 'gemini/gemini-2.5-flash', previous_response_id: first.id, input: 'And then?' });
    assert.deepEqual(geminiTurns(gemini.chatRequests().at(-1)!.body!), ['user: Hi', `model: ${RESPONSES_REPLY}`, 'user: And then?']);
  });
});

describe('item_reference', () => {
  test('a reference to a stored item is replaced by it on a translated route (the Vercel AI SDK\'s tool loop); an unknown one is a 400', async () => {
    const tools = [{ type: 'function' as const, name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];
    const first = await client.responses.create({ model: 'anthropic/sim-tool', input: 'Weather in Paris and London?', tools });
    const calls = first.output.filter((item) => item.type === 'function_call');
    const second = await client.responses.create({
      model: 'anthropic/sim-tool', tools,
      input: [
        { role: 'user', content: 'Weather in Paris and London?' },
        ...first.output.map((item) => ({ type: 'item_reference' as const, id: item.id! })),
        ...calls.map((call) => ({ type: 'function_call_output' as const, call_id: call.call_id, output: '18 °C' })),
      ],
    });
    assert.equal(second.output_text, SIM_TOOL_ANSWER);
    assert.deepEqual(anthropicTurns(anthropic.lastMessages().body!), [
      'user: Weather in Paris and London?',
      'assistant: Let me check. [tool_use toolu_sim_paris] [tool_use toolu_sim_london]',
      'user: [tool_result toolu_sim_paris] [tool_result toolu_sim_london]',
    ]);
    const unknown = await client.responses.create({ model: 'anthropic/sim-tool', input: [{ type: 'item_reference', id: 'fc_nowhere' }] }).catch((e: unknown) => e);
    assert.ok(unknown instanceof OpenAI.BadRequestError);
    assert.equal(unknown.param, 'input[0].type');
  });

  test('another user cannot reference my items', async () => {
    const mine = await client.responses.create({ model: 'anthropic/claude-sonnet-4-5', input: 'Say hello' });
    const theirs = await other.responses.create({ model: 'anthropic/claude-sonnet-4-5', input: [{ type: 'item_reference', id: mine.output[0]!.id! }] }).catch((e: unknown) => e);
    assert.ok(theirs instanceof OpenAI.BadRequestError);
  });
});

describe('item_reference bounds (issue 39)', () => {
  const MIB = 1024 * 1024;
  /** `count` references to item `id`. */
  const references = (id: string, count: number) => Array.from({ length: count }, () => ({ type: 'item_reference' as const, id }));

  /** A stored response (translated, so its metadata is echoed and stored) holding `bytes` of metadata; its message item's id. */
  async function heavyItem(bytes: number): Promise<string> {
    const created = await client.responses.create({ model: 'anthropic/claude-sonnet-4-5', input: 'Say hello', metadata: { blob: 'x'.repeat(bytes) } });
    return created.output[0]!.id!;
  }

  /** RSS growth across `run` (after a GC when exposed), and /healthz answering after it. */
  async function rssGrowth(run: () => Promise<void>): Promise<number> {
    (globalThis as { gc?: () => void }).gc?.();
    const before = process.memoryUsage.rss();
    await run();
    const grown = process.memoryUsage.rss() - before;
    const health = await fetch(`${tg.gateway.origin}/healthz`);
    assert.equal(health.status, 200);
    return grown;
  }

  test('more references than maxItemReferences get a 400 before the store is read, and the gateway stays responsive', async () => {
    const id = await heavyItem(MIB / 4);
    const sent = anthropic.requests.length;
    let answer = { status: 0, text: '' };
    const grown = await rssGrowth(async () => {
      answer = await tg.post('/responses', { model: 'anthropic/claude-sonnet-4-5', input: references(id, 1001) });
    });
    assert.equal(answer.status, 400, answer.text);
    assert.deepEqual(JSON.parse(answer.text).error, {
      message: '"input" holds 1001 item_reference items; the gateway resolves at most 1000 per request. Send the items themselves, or continue with previous_response_id.',
      type: 'invalid_request_error', code: 'invalid_request', param: 'input',
    });
    assert.equal(anthropic.requests.length, sent, 'nothing went upstream');
    assert.ok(grown < 64 * MIB, `RSS grew ${grown} bytes`);
  });

  test('a thousand references to one item of a response with 256 KiB of metadata read that item once', async () => {
    const id = await heavyItem(MIB / 4);
    const grown = await rssGrowth(async () => {
      const answer = await tg.post('/responses', { model: 'anthropic/claude-sonnet-4-5', input: [...references(id, 1000), { role: 'user', content: 'Go on.' }] });
      assert.equal(answer.status, 200, answer.text);
    });
    const turns = anthropicTurns(anthropic.lastMessages().body!);
    // Consecutive assistant turns are merged into one message by the translation; the last is the user's.
    assert.equal(turns.at(-1), 'user: Go on.');
    assert.equal(turns.join('\n').split(ANTHROPIC_REPLY).length - 1, 1000, 'each reference carries the item');
    assert.ok(grown < 64 * MIB, `RSS grew ${grown} bytes: the 256 KiB response was read more than once`);
  });

  test('references whose items come to more than maxExpandedBytes get a 413 before anything is sent', async () => {
    const table = createResponseTable(tg.gateway.store);
    const nowMs = Date.now();
    const text = 'y'.repeat(300_000);
    await table.insert({
      gatewayUserId: tg.userId, id: 'resp_big_item', createdAtMs: nowMs, expiresAtMs: nowMs + 86_400_000, model: 'anthropic/claude-sonnet-4-5', provider: 'anthropic',
      servedNatively: false, previousResponseId: null, inputItems: [],
      response: { id: 'resp_big_item', output: [{ id: 'msg_big_item', type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] }] },
    });
    const sent = anthropic.requests.length;
    // 13 × 300 kB fits 4 MiB; 14 do not.
    const fits = await tg.post('/responses', { model: 'anthropic/claude-sonnet-4-5', input: references('msg_big_item', 13) });
    assert.equal(fits.status, 200, fits.text.slice(0, 300));
    const over = await tg.post('/responses', { model: 'anthropic/claude-sonnet-4-5', input: references('msg_big_item', 14) });
    assert.equal(over.status, 413, over.text.slice(0, 300));
    assert.deepEqual(JSON.parse(over.text).error, {
      message: 'The stored items this request names (its item_reference items and its previous_response_id chain) exceed the gateway\'s limit of 4194304 bytes. Name fewer, or send the conversation itself.',
      type: 'invalid_request_error', code: 'request_too_large', param: null,
    });
    assert.equal(anthropic.requests.length, sent + 1, 'only the request that fits went upstream');
  });

  test('a previous_response_id chain of more than maxExpandedBytes gets a 413', async () => {
    const table = createResponseTable(tg.gateway.store);
    const nowMs = Date.now();
    let previous: string | null = null;
    for (let i = 0; i < 3; i++) {
      const id = `resp_long_chain_${i}`;
      await table.insert({
        gatewayUserId: tg.userId, id, createdAtMs: nowMs, expiresAtMs: nowMs + 86_400_000, model: 'anthropic/claude-sonnet-4-5', provider: 'anthropic',
        servedNatively: false, previousResponseId: previous,
        inputItems: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'z'.repeat(1_500_000) }] }],
        response: { id, output: [{ id: `msg_long_chain_${i}`, type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] }] },
      });
      previous = id;
    }
    const sent = anthropic.requests.length;
    const fits = await client.responses.create({ model: 'anthropic/claude-sonnet-4-5', previous_response_id: 'resp_long_chain_1', input: 'Go on.' });
    assert.equal(fits.output_text, ANTHROPIC_REPLY);
    await assert.rejects(client.responses.create({ model: 'anthropic/claude-sonnet-4-5', previous_response_id: 'resp_long_chain_2', input: 'Go on.' }), (err: unknown) => {
      assert.ok(err instanceof OpenAI.APIError && err.status === 413, String(err));
      assert.equal((err.error as { code: string }).code, 'request_too_large');
      return true;
    });
    assert.equal(anthropic.requests.length, sent + 1);
  });
});

describe('item_reference isolation (issue 39)', () => {
  const OWN_KEY = 'sk-own-openai-key-0123456789';

  /** Asserts `promise` fails with the 404 of unknown item `id`, in OpenAI's shape. */
  async function rejectsItemNotFound(promise: Promise<unknown>, id: string): Promise<void> {
    await assert.rejects(promise, (err: unknown) => {
      assert.ok(err instanceof OpenAI.NotFoundError, String(err));
      assert.deepEqual(err.error, {
        message: `Item with id '${id}' not found. The gateway forwards a reference to an item it does not hold only with your own provider credential; send the item itself instead.`,
        type: 'invalid_request_error', code: 'item_not_found', param: 'input',
      });
      return true;
    });
  }

  test('an item id the gateway does not hold is refused on a native OpenAI route with the shared key, and forwarded with the user\'s own', async () => {
    const user = await createGatewayUser(tg.gateway.store.db, { name: `own-key-${process.pid}` });
    const key = await createApiKey(tg.gateway.store.db, { gatewayUserId: user.id, name: 'own' });
    const own = new OpenAI({ apiKey: key.key, baseURL: `${tg.gateway.origin}/api/v1`, maxRetries: 0 });
    const mine = await own.responses.create({ model: 'anthropic/claude-sonnet-4-5', input: 'Say hello' });
    const known = { type: 'item_reference' as const, id: mine.output[0]!.id! };
    const leaked = { type: 'item_reference' as const, id: 'msg_of_another_account' };
    const sent = openai.requests.length;

    await rejectsItemNotFound(own.responses.create({ model: 'openai/gpt-5-mini', input: [leaked] }), leaked.id);
    await rejectsItemNotFound(own.responses.create({ model: 'openai/gpt-5-mini', input: [known, leaked] }), leaked.id);
    await rejectsItemNotFound(own.responses.create({ model: 'openai/gpt-5-mini', stream: true, input: [leaked] }), leaked.id);
    assert.equal(openai.requests.length, sent, 'nothing went upstream with the shared key');
    const held = await own.responses.create({ model: 'openai/gpt-5-mini', input: [known, { role: 'user', content: 'Go on.' }] });
    assert.equal(held.output_text, RESPONSES_REPLY, 'an item the gateway holds still resolves');
    assert.equal(openai.requests.at(-1)!.headers.authorization, 'Bearer sk-openai');

    const admin = await loginAdmin(tg.gateway.origin);
    assert.equal((await admin.put(`/admin/api/users/${user.id}/credentials/openai`, { api_key: OWN_KEY })).status, 200);
    try {
      const forwarded = await own.responses.create({ model: 'openai/gpt-5-mini', input: [leaked] });
      assert.equal(forwarded.output_text, RESPONSES_REPLY);
      const last = openai.requests.at(-1)!;
      assert.equal(last.headers.authorization, `Bearer ${OWN_KEY}`);
      assert.deepEqual(last.body!.input, [leaked]);
    } finally {
      await admin.delete(`/admin/api/users/${user.id}/credentials/openai`);
    }
  });
});
