/**
 * Gateway-kept Responses state (plugin response-store) through the official `openai` SDK:
 * `responses.create` / `.stream` / `retrieve` / `delete` / `inputItems.list`, and
 * `previous_response_id` on translated (Anthropic, Gemini) and native (OpenAI Responses simulator)
 * upstreams, also when a conversation moves between them; each user sees only their own responses.
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
