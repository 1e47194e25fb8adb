/**
 * Routing and failover through the whole gateway (docs/routing.md): model groups that
 * fall back after a 500, a 429 with retry-after, a refused connection and a timeout, in the chat,
 * Messages and Responses dialects, streaming included; no retry once the first byte was sent nor
 * for an error the request caused; a retry on the same deployment honouring retry-after-ms; the
 * attempts in the log row, its admin detail and /metrics; groups listed by GET /api/v1/models;
 * `providerOrder` for a bare id; per-key model allow-lists (403).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { startTestGateway, type LogRow, type TestGateway } from '../helpers/test-gateway.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startAnthropicSimulator, type AnthropicSimulator } from '../helpers/anthropic-simulator.ts';
import { startResponsesSimulator, type ResponsesSimulator } from '../helpers/openai-responses-simulator.ts';
import { createApiKey } from '../../core/accounts/api-keys.ts';
import { getLogRow } from '../../core/admin/logs-query.ts';

/** A port nothing listens on: bound once, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const group = (...targets: string[]) => ({
  strategy: 'fallback',
  deployments: targets.map((t) => ({ provider: t.slice(0, t.indexOf('/')), model: t.slice(t.indexOf('/') + 1) })),
});

let simA: OpenAISimulator;
let simB: OpenAISimulator;
let anthropic: AnthropicSimulator;
let responses: ResponsesSimulator;
let tg: TestGateway;

before(async () => {
  // Every other upstream answer must come within the headers timeout, also on a busy machine (5 s, not
  // 1 s); sim-slow outlasts it many times over.
  simA = await startOpenAISimulator({ slowMs: 60_000 });
  simB = await startOpenAISimulator();
  anthropic = await startAnthropicSimulator();
  responses = await startResponsesSimulator();
  tg = await startTestGateway({
    providers: {
      a: { type: 'openai', baseUrl: simA.baseUrl, apiKey: 'sk-a' },
      b: { type: 'openai', baseUrl: simB.baseUrl, apiKey: 'sk-b' },
      down: { type: 'openai', baseUrl: `http://127.0.0.1:${await closedPort()}/v1`, apiKey: 'sk-down' },
      ant: { type: 'anthropic', baseUrl: anthropic.baseUrl, apiKey: 'sk-ant' },
      resp: { type: 'openai', baseUrl: responses.baseUrl, apiKey: 'sk-r' },
    },
    upstream: { headersTimeoutMs: 5_000 },
    router: {
      models: {
        'after-500': group('a/sim-500', 'b/gpt-4o-mini'),
        'after-429': group('a/sim-429', 'b/gpt-4o-mini'),
        'after-refused': group('down/gpt-4o-mini', 'b/gpt-4o-mini'),
        'after-timeout': group('a/sim-slow', 'b/gpt-4o-mini'),
        'after-first-byte': group('a/sim-reset', 'b/gpt-4o-mini'),
        'after-404': group('a/sim-404', 'b/gpt-4o-mini'),
        'all-fail': group('a/sim-500', 'down/gpt-4o-mini'),
        'claude-group': group('ant/sim-overloaded', 'b/gpt-4o-mini'),
        'responses-group': group('resp/sim-429', 'ant/claude-sonnet-4-5'),
        flaky: group('a/sim-flaky-1'),
        'long-retry-after': group('a/sim-429'),
        'old-alias': 'b/gpt-4o',
      },
      providerOrder: ['b', 'a'],
      retry: { retriesPerDeployment: 1, maxRetryAfterMs: 1_000 },
    },
  });
});

after(async () => {
  await tg.close();
  await Promise.all([simA.close(), simB.close(), anthropic.close(), responses.close()]);
});

function post(path: string, body: unknown, headers: Record<string, string> = {}, key = tg.apiKey) {
  return fetch(`${tg.gateway.origin}/api/v1${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, ...headers },
    body: JSON.stringify(body),
  });
}

const chat = (model: string, extra: Record<string, unknown> = {}, key?: string) =>
  post('/chat/completions', { model, messages: [{ role: 'user', content: 'Hi' }], ...extra }, {}, key);

interface Attempt {
  provider: string;
  model: string;
  status: number | null;
  errorCode: string | null;
  latencyMs: number;
}

async function attemptsOf(res: Response): Promise<{ row: LogRow; attempts: Attempt[] }> {
  const row = await tg.logRow(res.headers.get('x-request-id')!);
  return { row, attempts: JSON.parse(row.attempts ?? 'null') as Attempt[] };
}

describe('fallback before the first byte, chat completions', () => {
  test('a 500 from the first deployment is answered by the next one, and the log row names both attempts', async () => {
    const before = simB.requests.length;
    const res = await chat('after-500');
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(((await res.json()) as { object: string }).object, 'chat.completion');
    assert.equal(simB.requests.length, before + 1);
    const { row, attempts } = await attemptsOf(res);
    assert.equal(row.provider, 'b', 'the log bills the deployment that served');
    assert.equal(row.model_requested, 'after-500');
    assert.deepEqual(attempts.map((a) => [a.provider, a.model, a.status, a.errorCode]), [['a', 'sim-500', 500, 'upstream_error'], ['b', 'gpt-4o-mini', 200, null]]);
    // Exactly these fields: the deployment's prompt-token rules once rode along into every logged attempt.
    assert.deepEqual(attempts.map((a) => Object.keys(a)), [0, 1].map(() => ['provider', 'model', 'status', 'errorCode', 'latencyMs']));
    const detail = (await getLogRow(tg.gateway.store, row.id))!;
    assert.deepEqual(detail.attempts!.map((a) => [a.provider, a.status, a.error_code]), [['a', 500, 'upstream_error'], ['b', 200, null]]);
  });

  test('a 429 with retry-after moves on to the next deployment at once, streaming with the SDK', async () => {
    const stream = await tg.client.chat.completions.create({ model: 'after-429', messages: [{ role: 'user', content: 'Hi' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    assert.ok(text.length > 0);
    assert.equal(simB.requests.at(-1)!.body!.model, 'gpt-4o-mini');
  });

  test('a refused connection falls back, streaming', async () => {
    const res = await chat('after-refused', { stream: true });
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.match(text, /data: \[DONE\]/);
    const { attempts } = await attemptsOf(res);
    assert.deepEqual(attempts.map((a) => [a.provider, a.status, a.errorCode]), [['down', null, 'upstream_unreachable'], ['b', 200, null]]);
  });

  test('a timeout before the answer falls back', async () => {
    const res = await chat('after-timeout');
    assert.equal(res.status, 200, await res.clone().text());
    const { attempts } = await attemptsOf(res);
    assert.deepEqual(attempts.map((a) => [a.provider, a.errorCode]), [['a', 'upstream_timeout'], ['b', null]]);
  });

  test('a stream that fails after its first byte ends with an error event and is not retried', async () => {
    const before = simB.requests.length;
    const res = await chat('after-first-byte', { stream: true });
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.match(text, /data: \{"error":/);
    assert.doesNotMatch(text, /\[DONE\]/);
    assert.equal(simB.requests.length, before, 'no second attempt');
    const { row, attempts } = await attemptsOf(res);
    assert.equal(attempts.length, 1);
    assert.equal(row.provider, 'a');
  });

  test('an error the request caused (404) is answered as it is, without another attempt', async () => {
    const before = simB.requests.length;
    const res = await chat('after-404');
    assert.equal(res.status, 404);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'model_not_found');
    assert.equal(simB.requests.length, before);
  });

  test('when every deployment fails the last error answers, after at most maxAttempts attempts', async () => {
    const res = await chat('all-fail');
    assert.equal(res.status, 502);
    const body = (await res.json()) as { error: { code: string; type: string } };
    assert.equal(body.error.type, 'upstream_error');
    const { attempts } = await attemptsOf(res);
    assert.equal(attempts.length, 3, 'two deployments, then a second round on the first (retriesPerDeployment 1), capped at 3');
    assert.deepEqual(attempts.map((a) => a.provider), ['a', 'down', 'a']);
  });

  test('the same deployment is retried after the retry-after-ms it asked for', async () => {
    const res = await chat('flaky');
    assert.equal(res.status, 200, await res.clone().text());
    const { attempts } = await attemptsOf(res);
    assert.deepEqual(attempts.map((a) => [a.model, a.status]), [['sim-flaky-1', 503], ['sim-flaky-1', 200]]);
  });

  test('a retry-after longer than maxRetryAfterMs ends the retries at once', async () => {
    const res = await chat('long-retry-after');
    assert.equal(res.status, 429);
    assert.equal(res.headers.get('retry-after'), '2');
    const { attempts } = await attemptsOf(res);
    assert.equal(attempts.length, 1);
  });

  test('/metrics counts the attempts by provider and outcome', async () => {
    const text = await (await fetch(`${tg.gateway.origin}/metrics`)).text();
    assert.match(text, /tollgate_upstream_attempts_total\{provider="a",outcome="failed"\} [1-9]/);
    assert.match(text, /tollgate_upstream_attempts_total\{provider="b",outcome="served"\} [1-9]/);
  });
});

describe('fallback in the Messages and Responses dialects', () => {
  const messages = (body: Record<string, unknown>) =>
    post('/messages', { max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }], ...body }, { 'anthropic-version': '2023-06-01' });

  test('Messages: an overloaded Anthropic (native) falls back to OpenAI (translated)', async () => {
    const res = await messages({ model: 'claude-group' });
    assert.equal(res.status, 200, await res.clone().text());
    const body = (await res.json()) as { type: string; content: Array<{ text: string }> };
    assert.equal(body.type, 'message');
    const { row, attempts } = await attemptsOf(res);
    assert.equal(row.provider, 'b');
    assert.deepEqual(attempts.map((a) => [a.provider, a.status]), [['ant', 529], ['b', 200]]);
  });

  test('Messages, streaming: the fallback streams Anthropic events', async () => {
    const res = await messages({ model: 'claude-group', stream: true });
    assert.equal(res.status, 200);
    const text = await res.text();
    assert.match(text, /event: message_start/);
    assert.match(text, /event: message_stop/);
    assert.doesNotMatch(text, /overloaded/i);
  });

  test('Responses: a 429 from OpenAI (native) falls back to Anthropic (translated), streaming too', async () => {
    const res = await post('/responses', { model: 'responses-group', input: 'Hi', store: false });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(((await res.json()) as { object: string }).object, 'response');
    const { attempts } = await attemptsOf(res);
    assert.deepEqual(attempts.map((a) => [a.provider, a.status]), [['resp', 429], ['ant', 200]]);
    const streamed = await post('/responses', { model: 'responses-group', input: 'Hi', store: false, stream: true });
    assert.equal(streamed.status, 200);
    assert.match(await streamed.text(), /response\.completed/);
  });
});

describe('model names', () => {
  test('GET /api/v1/models lists groups and aliases beside the discovered models', async () => {
    const list = await tg.client.models.list();
    const ids = list.data.map((m) => m.id);
    for (const id of ['after-500', 'claude-group', 'old-alias', 'b/gpt-4o-mini']) assert.ok(ids.includes(id), id);
  });

  test('a string alias still maps a name to one provider\'s model', async () => {
    const res = await chat('old-alias');
    assert.equal(res.status, 200);
    assert.equal(simB.requests.at(-1)!.body!.model, 'gpt-4o');
  });

  test('a bare id two providers list goes to the first of providerOrder', async () => {
    const before = simB.requests.length;
    const res = await chat('gpt-4o-mini');
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(simB.requests.length, before + 1);
    assert.equal((await attemptsOf(res)).row.provider, 'b');
  });
});

describe('per-key model allow-lists', () => {
  let limitedKey: string;
  before(async () => {
    limitedKey = (await createApiKey(tg.gateway.store.db, { gatewayUserId: tg.userId, name: 'limited', models: ['after-*', 'b/*'] })).key;
  });

  test('a group, a provider/model and a bare id that resolves to an allowed provider are served', async () => {
    for (const model of ['after-500', 'b/gpt-4o-mini', 'gpt-4o-mini']) {
      const res = await chat(model, {}, limitedKey);
      assert.equal(res.status, 200, `${model}: ${await res.clone().text()}`);
    }
  });

  test('any other model answers 403 permission_denied naming the model and the patterns', async () => {
    const res = await chat('a/gpt-4o-mini', {}, limitedKey);
    assert.equal(res.status, 403);
    const body = (await res.json()) as { error: { code: string; type: string; message: string; param: string } };
    assert.equal(body.error.code, 'permission_denied');
    assert.equal(body.error.type, 'permission_error');
    assert.equal(body.error.param, 'model');
    assert.match(body.error.message, /"a\/gpt-4o-mini".*"after-\*", "b\/\*"/);
    const messages = await post('/messages', { model: 'claude-group', max_tokens: 10, messages: [{ role: 'user', content: 'Hi' }] }, { 'anthropic-version': '2023-06-01' }, limitedKey);
    assert.equal(messages.status, 403);
    assert.equal(((await messages.json()) as { error: { type: string } }).error.type, 'permission_error');
  });
});
