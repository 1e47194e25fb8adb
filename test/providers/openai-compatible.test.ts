/**
 * The generic OpenAI-compatible provider against an upstream that replays the documented deviations
 * of Groq, DeepSeek, OpenRouter, vLLM and LM Studio (docs/provider-wire-formats.md §6):
 * SSE comments and keep-alives, usage in `x_groq`, DeepSeek cache-hit fields, errors whose `error` is
 * a string or whose `code` is a number, and no key at all.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { APIError } from 'openai';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';

interface Seen {
  path: string;
  headers: IncomingMessage['headers'];
  body: Record<string, unknown> | null;
}

let server: Server;
let baseUrl: string;
let tg: TestGateway;
const seen: Seen[] = [];

const chunk = (delta: Record<string, unknown>, finish: string | null = null, extra: Record<string, unknown> = {}) =>
  `data: ${JSON.stringify({ id: 'chatcmpl-v', object: 'chat.completion.chunk', created: 1, model: 'vendor-model', choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;

/** Answers per model name: each a vendor's documented shape. */
function answer(model: string, stream: boolean): { status: number; type: string; body: string } {
  const sse = (parts: string[]) => ({ status: 200, type: 'text/event-stream', body: parts.join('') });
  switch (model) {
    case 'groq-stream':
      // Groq: usage on the last chunk under x_groq, keep-alive comments in between.
      return sse([': keep-alive\n\n', chunk({ role: 'assistant', content: 'Hel' }), ': ping\n\n', chunk({ content: 'lo' }),
        chunk({}, 'stop', { x_groq: { id: 'req_1', usage: { prompt_tokens: 11, completion_tokens: 2, total_tokens: 13, queue_time: 0.01 } } }), 'data: [DONE]\n\n']);
    case 'deepseek':
      if (stream) {
        return sse([': keep-alive\n\n', chunk({ role: 'assistant', content: 'Hi' }), chunk({}, 'stop'),
          `data: ${JSON.stringify({ id: 'chatcmpl-v', object: 'chat.completion.chunk', created: 1, model: 'deepseek-chat', choices: [], usage: { prompt_tokens: 30, completion_tokens: 4, total_tokens: 34, prompt_cache_hit_tokens: 24, prompt_cache_miss_tokens: 6 } })}\n\n`,
          'data: [DONE]\n\n']);
      }
      return {
        status: 200, type: 'application/json',
        body: JSON.stringify({
          id: 'chatcmpl-d', object: 'chat.completion', created: 1, model: 'deepseek-chat',
          choices: [{ index: 0, message: { role: 'assistant', content: 'Hi', reasoning_content: null }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 30, completion_tokens: 4, total_tokens: 34, prompt_cache_hit_tokens: 24, prompt_cache_miss_tokens: 6 },
        }),
      };
    case 'lmstudio-json':
      return { status: 400, type: 'application/json', body: JSON.stringify({ error: "'response_format.type' must be 'json_schema' or 'text'" }) };
    case 'openrouter-credits':
      return { status: 402, type: 'application/json', body: JSON.stringify({ error: { code: 402, message: 'Insufficient credits', metadata: {} } }) };
    case 'openrouter-mid-error':
      return sse([': OPENROUTER PROCESSING\n\n', chunk({ role: 'assistant', content: 'par' }),
        `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 1, model: 'm', error: { code: 502, message: 'Provider disconnected' }, choices: [{ index: 0, delta: { content: '' }, finish_reason: 'error' }] })}\n\n`]);
    case 'vllm-unwrapped':
      return { status: 404, type: 'application/json', body: JSON.stringify({ object: 'error', message: 'The model `vllm-unwrapped` does not exist.', type: 'NotFoundError', param: null, code: 404 }) };
    default:
      return {
        status: 200, type: 'application/json',
        body: JSON.stringify({ id: 'c', object: 'chat.completion', created: 1, model, choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }], usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } }),
      };
  }
}

before(async () => {
  server = createServer((req, res) => {
    let text = '';
    req.on('data', (d) => (text += d));
    req.on('end', () => {
      const body = text ? (JSON.parse(text) as Record<string, unknown>) : null;
      seen.push({ path: req.url ?? '', headers: req.headers, body });
      if (req.method === 'GET' && req.url === '/v1/models') {
        res.writeHead(200, { 'content-type': 'application/json' });
        // vLLM adds root/parent/max_model_len; created may be missing elsewhere.
        return res.end(JSON.stringify({ object: 'list', data: [{ id: 'vendor-model', object: 'model', owned_by: 'vllm', root: 'x', max_model_len: 8192 }] }));
      }
      const { status, type, body: out } = answer(String(body?.model), body?.stream === true);
      res.writeHead(status, { 'content-type': type });
      res.end(out);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  tg = await startTestGateway({ providers: { local: { type: 'openai-compatible', baseUrl } } });
});

after(async () => {
  await tg?.close();
  await new Promise<void>((r) => server.close(() => r()));
});

describe('openai-compatible upstreams', () => {
  test('works without a key and sends no authorization header', async () => {
    const data = await tg.client.chat.completions.create({ model: 'local/plain', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(data.choices[0]!.message.content, 'ok');
    assert.equal(seen.at(-1)!.headers.authorization, undefined);
    assert.equal(seen.at(-1)!.path, '/v1/chat/completions');
  });

  test('skips SSE comments and takes Groq usage from x_groq', async () => {
    const { data: stream, response } = await tg.client.chat.completions
      .create({ model: 'local/groq-stream', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } })
      .withResponse();
    let text = '';
    let usage: unknown = null;
    for await (const c of stream) {
      text += c.choices[0]?.delta.content ?? '';
      if (c.usage) usage = c.usage;
    }
    assert.equal(text, 'Hello');
    assert.deepEqual(usage, { prompt_tokens: 11, completion_tokens: 2, total_tokens: 13, queue_time: 0.01 });
    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.deepEqual([row.prompt_tokens, row.completion_tokens], [11, 2]);
  });

  test('maps DeepSeek cache hits to cached_tokens, streamed and not', async () => {
    const { data, response } = await tg.client.chat.completions.create({ model: 'local/deepseek', messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    assert.equal(data.usage!.prompt_tokens_details!.cached_tokens, 24);
    assert.equal((await tg.logRow(response.headers.get('x-request-id')!)).cached_tokens, 24);

    const { data: stream, response: streamed } = await tg.client.chat.completions
      .create({ model: 'local/deepseek', messages: [{ role: 'user', content: 'hi' }], stream: true })
      .withResponse();
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    assert.equal(chunks.some((c) => c.usage), false, 'usage was not asked for');
    const row = await tg.logRow(streamed.headers.get('x-request-id')!);
    assert.deepEqual([row.prompt_tokens, row.completion_tokens, row.cached_tokens], [30, 4, 24]);
  });

  test('reads errors whose error is a string, whose code is a number, or that have no wrapper', async () => {
    const cases: Array<[string, number, RegExp, string]> = [
      ['local/lmstudio-json', 400, /must be 'json_schema' or 'text'/, 'upstream_error'],
      ['local/openrouter-credits', 402, /Insufficient credits/, '402'],
      ['local/vllm-unwrapped', 404, /does not exist/, 'model_not_found'],
    ];
    for (const [model, status, message, code] of cases) {
      const err = await tg.client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }).catch((e: unknown) => e);
      assert.ok(err instanceof APIError, model);
      assert.equal(err.status, status, model);
      assert.match(err.message, message);
      assert.equal(err.code, code, model);
    }
  });

  test('an OpenRouter error after streaming started reaches the client as an error event', async () => {
    const stream = await tg.client.chat.completions.create({ model: 'local/openrouter-mid-error', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    const err = await (async () => {
      for await (const c of stream) text += c.choices[0]?.delta.content ?? '';
    })().catch((e: unknown) => e);
    assert.equal(text, 'par');
    assert.ok(err instanceof APIError);
    assert.match(err.message, /Provider disconnected/);
  });

  test('discovers models from GET /models with vendor fields', async () => {
    const list = await tg.client.models.list();
    assert.deepEqual(list.data.map((m) => [m.id, m.owned_by, m.created]), [['local/vendor-model', 'vllm', 0]]);
  });
});
