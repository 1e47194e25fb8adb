/**
 * Request bodies built to crash a validator or translator answer 400 `invalid_request` in the
 * dialect's shape, never 500 (issue 14 item 11): JSON nested 10,000+ levels deep (anywhere in the
 * body), an `image_url` content part without its `image_url`, and a `model` longer than
 * `MAX_MODEL_CHARS` (what the gateway tracks per model would keep each such name). A body refused
 * after authentication is logged for its user like any other failed request.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway } from '../../helpers/test-gateway.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../../helpers/openai-simulator.ts';
import { startAnthropicSimulator, type AnthropicSimulator } from '../../helpers/anthropic-simulator.ts';
import { MAX_MODEL_CHARS } from '../../../core/dialects/model-field.ts';

let openai: OpenAISimulator;
let anthropic: AnthropicSimulator;
let tg: TestGateway;

before(async () => {
  openai = await startOpenAISimulator();
  anthropic = await startAnthropicSimulator();
  tg = await startTestGateway({
    providers: {
      openai: { type: 'openai', baseUrl: openai.baseUrl, apiKey: 'sk-openai' },
      anthropic: { type: 'anthropic', baseUrl: anthropic.baseUrl, apiKey: 'sk-ant' },
    },
  });
});
after(async () => {
  await tg.close();
  await openai.close();
  await anthropic.close();
});

async function post(path: string, body: string): Promise<{ status: number; json: { error?: { type?: string; code?: string; message?: string; param?: string | null }; type?: string } }> {
  const res = await fetch(`${tg.gateway.origin}/api/v1${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tg.apiKey}`, 'content-type': 'application/json' },
    body,
  });
  return { status: res.status, json: await res.json() as never };
}

/** `[[[…]]]` nested `depth` levels. */
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const DEEP = 20_000;

describe('deeply nested JSON', () => {
  const cases: Array<[string, string, (deep: string) => string]> = [
    ['chat, an unknown top-level field', '/chat/completions', (deep) => `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"x":${deep}}`],
    ['chat, a tool schema (translated to Anthropic)', '/chat/completions', (deep) => `{"model":"anthropic/claude-sonnet-4-5","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"a":{"default":${deep}}}}}}]}`],
    ['chat, message content', '/chat/completions', (deep) => `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":${deep}}]}`],
    ['Messages, a tool input schema', '/messages', (deep) => `{"model":"openai/gpt-4o-mini","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":{"type":"object","x":${deep}}}]}`],
    ['Responses, input', '/responses', (deep) => `{"model":"anthropic/claude-sonnet-4-5","input":${deep}}`],
  ];
  for (const [name, path, body] of cases) {
    test(`answers 400 invalid_request for ${DEEP} levels: ${name}`, async () => {
      const { status, json } = await post(path, body(nested(DEEP)));
      assert.equal(status, 400, JSON.stringify(json));
      assert.match(json.error?.message ?? '', /nests arrays and objects more than 64 levels deep/);
    });
  }

  test('accepts a body nested 20 levels deep (a real tool schema)', async () => {
    let schema = '{"type":"string"}';
    for (let i = 0; i < 9; i++) schema = `{"type":"object","properties":{"a":${schema}}}`;
    const { status, json } = await post('/chat/completions', `{"model":"openai/gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${schema}}}]}`);
    assert.equal(status, 200, JSON.stringify(json));
  });
});

describe('an image_url part without image_url', () => {
  for (const model of ['openai/gpt-4o-mini', 'anthropic/claude-sonnet-4-5']) {
    test(`answers 400 naming the missing field (${model})`, async () => {
      const { status, json } = await post('/chat/completions', JSON.stringify({ model, messages: [{ role: 'user', content: [{ type: 'text', text: 'what is this?' }, { type: 'image_url' }] }] }));
      assert.equal(status, 400, JSON.stringify(json));
      assert.equal(json.error?.code, 'invalid_request');
      assert.equal(json.error?.param, 'messages[0].content[1].image_url');
      assert.equal(json.error?.message, 'Missing required field "messages[0].content[1].image_url".');
    });
  }
});

describe('a model name over MAX_MODEL_CHARS', () => {
  const cases: Array<[string, string, (model: string) => unknown]> = [
    ['chat completions', '/chat/completions', (model) => ({ model, messages: [{ role: 'user', content: 'hi' }] })],
    ['Responses', '/responses', (model) => ({ model, input: 'hi' })],
    ['embeddings', '/embeddings', (model) => ({ model, input: 'hi' })],
    ['Messages', '/messages', (model) => ({ model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })],
    ['Messages token count', '/messages/count_tokens', (model) => ({ model, messages: [{ role: 'user', content: 'hi' }] })],
  ];
  for (const [name, path, body] of cases) {
    test(`answers 400 invalid_request with param "model", in the dialect's shape: ${name}`, async () => {
      const tooLong = 'openai/' + 'x'.repeat(MAX_MODEL_CHARS - 'openai/'.length + 1);
      const { status, json } = await post(path, JSON.stringify(body(tooLong)));
      assert.equal(status, 400, JSON.stringify(json));
      if (path.startsWith('/messages')) assert.equal(json.type, 'error', 'Anthropic\'s error shape');
      else assert.equal(json.error?.code, 'invalid_request');
      assert.match(json.error?.message ?? '', /model/);
      assert.match(json.error?.message ?? '', new RegExp(`${MAX_MODEL_CHARS}`));
    });
  }

  test(`a model of exactly ${MAX_MODEL_CHARS} characters passes validation (the upstream answers for it)`, async () => {
    const longest = 'openai/' + 'x'.repeat(MAX_MODEL_CHARS - 'openai/'.length);
    const { status, json } = await post('/chat/completions', JSON.stringify({ model: longest, messages: [{ role: 'user', content: 'hi' }] }));
    assert.notEqual(json.error?.code, 'invalid_request', JSON.stringify(json));
    assert.ok(status === 200 || status === 404, `status ${status}: ${JSON.stringify(json)}`);
  });
});

describe('a body the gateway refuses, from a known key', () => {
  const cases: Array<[string, string, string]> = [
    ['malformed JSON on chat', '/chat/completions', '{"model":"openai/gpt-4o-mini","messages":['],
    ['a wrong type on Messages', '/messages', '{"model":"anthropic/claude-sonnet-4-5","max_tokens":"many","messages":[{"role":"user","content":"hi"}]}'],
    ['a model over the bound on Responses', '/responses', JSON.stringify({ model: `openai/${'m'.repeat(MAX_MODEL_CHARS)}`, input: 'hi' })],
  ];
  for (const [name, path, body] of cases) {
    test(`is logged for its user with its 400 (${name})`, async () => {
      const res = await fetch(`${tg.gateway.origin}/api/v1${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tg.apiKey}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
        body,
      });
      assert.equal(res.status, 400);
      const row = await tg.logRow(res.headers.get('x-request-id')!);
      assert.equal(row.status, 400);
      assert.equal(row.error_code, 'invalid_request');
      assert.equal(row.gateway_user_id, tg.userId);
      assert.equal(row.api_key_id, tg.keyId);
      assert.equal(row.model_requested, null);
    });
  }
});
