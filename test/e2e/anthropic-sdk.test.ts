/**
 * The Anthropic Messages endpoint (`POST /api/v1/messages`, `/count_tokens`) with the official
 * `@anthropic-ai/sdk` as the client (`baseURL: <gateway>/api`, a gateway key as the API key):
 * natively passed through to an Anthropic-format simulator (body bytes unchanged but the model,
 * events relayed unchanged, usage billed from `message_start` / `message_delta`), and translated to an
 * OpenAI-format simulator. Errors come back in Anthropic's shape. A token count is one request among
 * others: a pooled key's 403 through it disables nothing, an over-budget user may count, each is logged.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import Anthropic from '@anthropic-ai/sdk';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { createGatewayUser } from '../../core/accounts/gateway-users.ts';
import { createApiKey } from '../../core/accounts/api-keys.ts';
import { dataDirWithPrices } from '../helpers/prices.ts';
import {
  SIM_COUNT_TOKENS, SIM_PIECES, SIM_REPLY, SIM_TOOL_ANSWER, SIM_USAGE, startAnthropicSimulator, type AnthropicSimulator,
} from '../helpers/anthropic-simulator.ts';
import { SIM_REPLY as OPENAI_REPLY, SIM_USAGE as OPENAI_USAGE, startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';

const MODEL = 'claude-sonnet-4-5-20250929';
let sim: AnthropicSimulator;
let openai: OpenAISimulator;
let tg: TestGateway;
let client: Anthropic;

before(async () => {
  sim = await startAnthropicSimulator();
  openai = await startOpenAISimulator({ streamContentChunks: 3 });
  const dataDir = await dataDirWithPrices([
    // $3 / $15 per million, cache reads $0.30, cache writes $3.75 (Sonnet's list prices).
    { model: MODEL, provider: 'anthropic', input: 3, output: 15, cachedInput: 0.3, cacheWrite: 3.75 },
    { model: 'gpt-4o-mini', provider: 'openai', input: 0.15, output: 0.6 },
  ]);
  tg = await startTestGateway({
    dataDir,
    providers: {
      anthropic: { type: 'anthropic', baseUrl: sim.baseUrl, apiKey: 'sk-ant-upstream' },
      openai: { type: 'openai', baseUrl: openai.baseUrl, apiKey: 'sk-openai-upstream' },
    },
    router: { models: { 'claude-haiku-4-5': 'openai/gpt-4o-mini' } },
  });
  client = new Anthropic({ apiKey: tg.apiKey, baseURL: `${tg.gateway.origin}/api`, maxRetries: 0 });
});
after(async () => {
  await tg.close();
  await sim.close();
  await openai.close();
});

/** A raw call to the gateway's Messages endpoint. */
function post(path: string, body: string, headers: Record<string, string> = {}) {
  return fetch(`${tg.gateway.origin}/api/v1/messages${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': tg.apiKey, 'anthropic-version': '2023-06-01', ...headers }, body,
  });
}

describe('messages to a native Anthropic upstream', () => {
  test('answers a message with the upstream\'s content and bills its usage, cache reads and writes priced', async () => {
    const { data: message, response } = await client.messages
      .create({ model: `anthropic/${MODEL}`, max_tokens: 256, messages: [{ role: 'user', content: 'Say hello' }] })
      .withResponse();
    assert.equal(message.type, 'message');
    assert.deepEqual(message.content, [{ type: 'text', text: SIM_REPLY }]);
    assert.equal(message.usage.input_tokens, SIM_USAGE.input_tokens);
    assert.equal(message.usage.cache_read_input_tokens, SIM_USAGE.cache_read_input_tokens);
    assert.equal(sim.lastMessages().body!.model, MODEL, 'the provider prefix is removed upstream');
    assert.equal(sim.lastMessages().headers['x-api-key'], 'sk-ant-upstream', 'the gateway key is replaced by the credential');

    const row = await tg.logRow(response.headers.get('x-request-id')!);
    const prompt = SIM_USAGE.input_tokens + SIM_USAGE.cache_read_input_tokens + SIM_USAGE.cache_creation_input_tokens;
    assert.equal(row.prompt_tokens, prompt);
    assert.equal(row.completion_tokens, SIM_USAGE.output_tokens);
    assert.equal(row.cached_tokens, SIM_USAGE.cache_read_input_tokens);
    assert.equal(row.cache_write_tokens, SIM_USAGE.cache_creation_input_tokens);
    // 12 × $3 + 5 × $0.30 + 3 × $3.75 + 9 × $15, per million, in nano-USD.
    assert.equal(row.cost_nanos, 12 * 3000 + 5 * 300 + 3 * 3750 + 9 * 15000);
    assert.equal(row.usage_estimated, 0);
    assert.equal(row.endpoint, 'messages.create', 'the log records the endpoint');
  });

  test('passes the body through byte for byte but the model: cache_control, thinking, unknown fields', async () => {
    const body = JSON.stringify({
      model: `anthropic/${MODEL}`,
      max_tokens: 1024,
      system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral', ttl: '1h' } }],
      thinking: { type: 'enabled', budget_tokens: 1024 },
      context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Think, then answer.', cache_control: { type: 'ephemeral' } }] },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'Hmm.', signature: 'sig_replayed_123' }, { type: 'text', text: 'Done.' }] },
        { role: 'user', content: 'Again.' },
      ],
    });
    const res = await post('', body, { 'anthropic-beta': 'context-management-2025-06-27', 'x-custom': 'not forwarded' });
    assert.equal(res.status, 200, await res.clone().text());
    await res.json();
    const upstream = sim.lastMessages();
    assert.equal(upstream.rawBody, body.replace(`"anthropic/${MODEL}"`, `"${MODEL}"`));
    assert.equal(upstream.headers['anthropic-beta'], 'context-management-2025-06-27');
    assert.equal(upstream.headers['anthropic-version'], '2023-06-01');
    assert.equal(upstream.headers['x-custom'], undefined);
  });

  test('relays the event stream unchanged and bills it', async () => {
    const body = JSON.stringify({ model: `anthropic/${MODEL}`, max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Say hello' }] });
    const direct = await fetch(`${sim.baseUrl}/v1/messages`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' }, body: body.replace(`anthropic/${MODEL}`, MODEL),
    }).then((r) => r.text());
    const res = await post('', body);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    assert.equal(await res.text(), direct);

    const { data: events, response } = await client.messages
      .create({ model: `anthropic/${MODEL}`, max_tokens: 64, stream: true, messages: [{ role: 'user', content: 'Say hello' }] })
      .withResponse();
    const pieces: string[] = [];
    let outputTokens = 0;
    for await (const event of events) {
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') pieces.push(event.delta.text);
      if (event.type === 'message_delta') outputTokens = event.usage.output_tokens;
    }
    assert.deepEqual(pieces, SIM_PIECES);
    assert.equal(outputTokens, SIM_USAGE.output_tokens);
    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.equal(row.stream, 1);
    assert.equal(row.completion_tokens, SIM_USAGE.output_tokens);
    assert.equal(row.usage_estimated, 0);
  });

  test('round-trips a tool call with the SDK', async () => {
    const tools = [{ name: 'get_weather', description: 'Weather in a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } }];
    const question = { role: 'user' as const, content: 'Weather in Paris and London?' };
    const first = await client.messages.create({ model: 'anthropic/sim-tool', max_tokens: 256, tools, messages: [question] });
    assert.equal(first.stop_reason, 'tool_use');
    const uses = first.content.filter((b) => b.type === 'tool_use');
    assert.equal(uses.length, 2);
    const second = await client.messages.create({
      model: 'anthropic/sim-tool', max_tokens: 256, tools,
      messages: [question, { role: 'assistant', content: first.content }, {
        role: 'user', content: uses.map((u) => ({ type: 'tool_result' as const, tool_use_id: u.id, content: '18' })),
      }],
    });
    assert.deepEqual(second.content, [{ type: 'text', text: SIM_TOOL_ANSWER }]);
  });

  test('counts tokens with the upstream\'s own endpoint, billing nothing', async () => {
    const counted = await client.messages.countTokens({ model: `anthropic/${MODEL}`, messages: [{ role: 'user', content: 'How long is this?' }] });
    assert.equal(counted.input_tokens, SIM_COUNT_TOKENS);
    assert.equal(sim.requests.at(-1)!.path, '/v1/messages/count_tokens');
  });

  test('relays the upstream\'s own error status and words (529 overloaded, a 400), never a credential error\'s', async () => {
    const overloaded = await post('', JSON.stringify({ model: 'anthropic/sim-overloaded', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] }));
    assert.equal(overloaded.status, 529);
    const body = (await overloaded.json()) as { type: string; error: { type: string; message: string } };
    assert.deepEqual([body.type, body.error.type, body.error.message], ['error', 'overloaded_error', 'Overloaded']);
    const bad = await post('', JSON.stringify({ model: `anthropic/${MODEL}`, max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }, { role: 'user', content: 'Again' }] }));
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as { error: { message: string } }).error.message, /^messages: roles must alternate/);
    const denied = await post('', JSON.stringify({ model: 'anthropic/sim-401', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] }));
    assert.equal(denied.status, 401);
    assert.doesNotMatch(await denied.text(), /x-api-key/, 'the upstream\'s words about the key are replaced');
  });

  test('accepts Claude Code\'s ?beta=true and a Bearer token', async () => {
    const res = await fetch(`${tg.gateway.origin}/api/v1/messages?beta=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tg.apiKey}`, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: `anthropic/${MODEL}`, max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    assert.equal(res.status, 200);
    assert.equal(((await res.json()) as { type: string }).type, 'message');
  });
});

describe('messages translated to an OpenAI-format upstream', () => {
  test('answers a message from a chat completion', async () => {
    const message = await client.messages.create({
      model: 'openai/gpt-4o-mini', max_tokens: 64, system: 'Be brief.', messages: [{ role: 'user', content: 'Say hello' }],
    });
    assert.deepEqual(message.content, [{ type: 'text', text: OPENAI_REPLY }]);
    assert.equal(message.stop_reason, 'end_turn');
    const cached = OPENAI_USAGE.prompt_tokens_details!.cached_tokens!;
    assert.equal(message.usage.input_tokens, OPENAI_USAGE.prompt_tokens - cached);
    assert.equal(message.usage.cache_read_input_tokens, cached);
    assert.equal(message.usage.output_tokens, OPENAI_USAGE.completion_tokens);
    const upstream = openai.requests.at(-1)!.body!;
    assert.deepEqual(upstream.messages, [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say hello' }]);
    assert.equal(upstream.max_tokens, 64);
  });

  test('streams Messages events translated from chat chunks', async () => {
    const stream = client.messages.stream({ model: 'openai/gpt-4o-mini', max_tokens: 64, messages: [{ role: 'user', content: 'Say hello' }] });
    let text = '';
    stream.on('text', (piece) => (text += piece));
    const final = await stream.finalMessage();
    assert.equal(text, final.content.map((b) => (b.type === 'text' ? b.text : '')).join(''));
    assert.ok(text.length > 0);
    assert.equal(final.usage.output_tokens, OPENAI_USAGE.completion_tokens);
    const { response } = await stream.withResponse();
    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.equal(row.provider, 'openai');
    assert.equal(row.completion_tokens, OPENAI_USAGE.completion_tokens);
  });

  test('a PDF document reaches Anthropic as sent, but is refused with a 400 naming it when it must be translated', async () => {
    const content = [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' } }, { type: 'text', text: 'Summarize' }];
    const native = await post('', JSON.stringify({ model: `anthropic/${MODEL}`, max_tokens: 16, messages: [{ role: 'user', content }] }));
    assert.equal(native.status, 200);
    assert.deepEqual((sim.lastMessages().body!.messages as Array<{ content: unknown }>)[0]!.content, content);
    const translated = await post('', JSON.stringify({ model: 'openai/gpt-4o-mini', max_tokens: 16, messages: [{ role: 'user', content }] }));
    assert.equal(translated.status, 400);
    const body = (await translated.json()) as { type: string; error: { type: string; message: string } };
    assert.equal(body.error.type, 'invalid_request_error');
    assert.match(body.error.message, /messages\[0\]\.content\[0\]\.type/);
  });

  test('thinking becomes reasoning_effort for a reasoning model, and is dropped for one that refuses it', async () => {
    const ask = (model: string) => client.messages.create({
      model, max_tokens: 18_000, thinking: { type: 'enabled', budget_tokens: 16_384 }, messages: [{ role: 'user', content: 'Think.' }],
    });
    await ask('openai/o4-mini');
    assert.equal(openai.requests.at(-1)!.body!.reasoning_effort, 'high');
    await ask('openai/gpt-4o-mini');
    assert.equal(openai.requests.at(-1)!.body!.reasoning_effort, undefined);
  });

  test('counts tokens locally for a provider without a token-count endpoint', async () => {
    const counted = await client.messages.countTokens({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'How long is this?' }] });
    assert.ok(counted.input_tokens > 3 && counted.input_tokens < 20, String(counted.input_tokens));
  });
});

describe('model names and body size for agents', () => {
  test('a bare Claude id no catalog lists goes to Anthropic', async () => {
    const message = await client.messages.create({ model: 'claude-opus-5-5', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] });
    assert.deepEqual(message.content, [{ type: 'text', text: SIM_REPLY }]);
    assert.equal(sim.lastMessages().body!.model, 'claude-opus-5-5');
  });

  test('a model name from the manifest runs a Claude name on another provider', async () => {
    const before = openai.requests.length;
    const message = await client.messages.create({ model: 'claude-haiku-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] });
    assert.deepEqual(message.content, [{ type: 'text', text: OPENAI_REPLY }]);
    assert.equal(openai.requests.length, before + 1);
    assert.equal(openai.requests.at(-1)!.body!.model, 'gpt-4o-mini');
  });

  test('the model list reads with the Anthropic SDK: provider models and the manifest\'s names', async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) {
      assert.equal(model.type, 'model');
      assert.ok(model.display_name && !Number.isNaN(Date.parse(model.created_at)));
      ids.push(model.id);
    }
    assert.ok(ids.includes(`anthropic/${MODEL}`), ids.join(', '));
    assert.ok(ids.includes('claude-haiku-4-5'));
  });

  test('a 5 MiB session is accepted on /messages (32 MiB limit) while chat completions keep 4 MiB', async () => {
    const text = 'word '.repeat(1024 * 1024);
    const body = (extra: Record<string, unknown>) => JSON.stringify({ model: `anthropic/${MODEL}`, messages: [{ role: 'user', content: text }], ...extra });
    const messages = await post('', body({ max_tokens: 16 }));
    assert.equal(messages.status, 200);
    await messages.arrayBuffer();
    const chat = await fetch(`${tg.gateway.origin}/api/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${tg.apiKey}` }, body: body({}),
    });
    assert.equal(chat.status, 413);
  });
});

describe('errors in Anthropic\'s shape', () => {
  test('an unknown key is 401 authentication_error', async () => {
    const stranger = new Anthropic({ apiKey: 'tg-not-a-key', baseURL: `${tg.gateway.origin}/api`, maxRetries: 0 });
    await assert.rejects(stranger.messages.create({ model: `anthropic/${MODEL}`, max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] }), (err: unknown) => {
      assert.ok(err instanceof Anthropic.AuthenticationError);
      assert.equal(err.status, 401);
      assert.equal((err.error as { type: string; error: { type: string } }).type, 'error');
      assert.equal((err.error as { error: { type: string } }).error.type, 'authentication_error');
      return true;
    });
  });

  test('a stranger is refused 401 before the body is read, even a malformed or huge one', async () => {
    const res = await fetch(`${tg.gateway.origin}/api/v1/messages`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': 'tg-nobody' }, body: '{"model": ',
    });
    assert.equal(res.status, 401);
    assert.equal(((await res.json()) as { error: { type: string } }).error.type, 'authentication_error');
    const chat = await fetch(`${tg.gateway.origin}/api/v1/chat/completions`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer tg-nobody' }, body: 'x'.repeat(5 * 1024 * 1024),
    });
    assert.equal(chat.status, 401, 'not 413: the body was never read');
    await chat.arrayBuffer();
  });

  test('a malformed body is 400 invalid_request_error', async () => {
    const res = await post('', '{"model": "anthropic/x", "messages": ');
    assert.equal(res.status, 400);
    const body = (await res.json()) as { type: string; error: { type: string; message: string } };
    assert.equal(body.type, 'error');
    assert.equal(body.error.type, 'invalid_request_error');
  });

  test('an unknown model is 404 not_found_error, an upstream rate limit 429 rate_limit_error', async () => {
    await assert.rejects(client.messages.create({ model: 'nope/x', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] }), (err: unknown) => {
      assert.ok(err instanceof Anthropic.BadRequestError);
      return true;
    });
    await assert.rejects(client.messages.create({ model: 'anthropic/sim-429', max_tokens: 8, messages: [{ role: 'user', content: 'Hi' }] }), (err: unknown) => {
      assert.ok(err instanceof Anthropic.RateLimitError);
      assert.equal((err.error as { error: { type: string } }).error.type, 'rate_limit_error');
      return true;
    });
  });
});

describe('count_tokens as one request among others (issue 39)', () => {
  const POOL = ['sk-ant-pool-key-1111', 'sk-ant-pool-key-2222'];
  let pooled: TestGateway;
  /** An SDK client with a key of a new gateway user of `pooled` (with `user`'s budget). */
  async function clientOf(user: { budgetUsd?: number } = {}): Promise<Anthropic> {
    const created = await createGatewayUser(pooled.gateway.store.db, { name: `count-tokens-${process.pid}-${Math.random()}`, ...user });
    const key = await createApiKey(pooled.gateway.store.db, { gatewayUserId: created.id, name: 'sdk' });
    return new Anthropic({ apiKey: key.key, baseURL: `${pooled.gateway.origin}/api`, maxRetries: 0 });
  }

  before(async () => {
    pooled = await startTestGateway({
      dataDir: await dataDirWithPrices([{ model: MODEL, provider: 'pooled', input: 3, output: 15 }]),
      providers: { pooled: { type: 'anthropic', baseUrl: sim.baseUrl, apiKeys: POOL } },
    });
  });
  after(() => pooled?.close());

  test('a 403 for a model the account may not use, through count_tokens, disables no pooled key; each count is logged at cost 0', async () => {
    const caller = await clientOf();
    const denied: string[] = [];
    for (let i = 0; i < 3; i++) {
      await assert.rejects(caller.messages.countTokens({ model: 'pooled/sim-403', messages: [{ role: 'user', content: 'Hi' }] }), (err: unknown) => {
        assert.ok(err instanceof Anthropic.PermissionDeniedError, String(err));
        assert.equal((err.error as { error: { type: string } }).error.type, 'permission_error');
        denied.push(err.headers?.get('x-request-id') ?? '');
        return true;
      });
    }
    const ready = (await (await fetch(`${pooled.gateway.origin}/readyz`)).json()) as { upstreams: { keys: Record<string, { ok: number; cooling: number; disabled: number }> } };
    assert.deepEqual(Object.values(ready.upstreams.keys), [{ ok: 2, cooling: 0, disabled: 0 }], 'a request\'s 403 is not the key\'s');

    const someoneElse = await clientOf();
    const counted = await someoneElse.messages.countTokens({ model: `pooled/${MODEL}`, messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(counted.input_tokens, SIM_COUNT_TOKENS);
    const message = await someoneElse.messages.create({ model: `pooled/${MODEL}`, max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(message.type, 'message', 'everyone is still served');

    for (const requestId of denied) {
      const row = await pooled.logRow(requestId);
      assert.deepEqual([row.endpoint, row.status, row.cost_nanos, row.model_requested], ['messages.count_tokens', 403, 0, 'pooled/sim-403']);
    }
  });

  test('an over-budget user may still count tokens: nothing is billed, and the count is logged', async () => {
    const broke = await clientOf({ budgetUsd: 0 });
    await assert.rejects(broke.messages.create({ model: `pooled/${MODEL}`, max_tokens: 16, messages: [{ role: 'user', content: 'Hi' }] }), (err: unknown) => {
      assert.equal((err as { status?: number }).status, 402);
      return true;
    });
    const { data: counted, response } = await broke.messages.countTokens({ model: `pooled/${MODEL}`, messages: [{ role: 'user', content: 'Hi' }] }).withResponse();
    assert.equal(counted.input_tokens, SIM_COUNT_TOKENS);
    const row = await pooled.logRow(response.headers.get('x-request-id')!);
    assert.deepEqual([row.endpoint, row.status, row.cost_nanos], ['messages.count_tokens', 200, 0]);
  });
});
