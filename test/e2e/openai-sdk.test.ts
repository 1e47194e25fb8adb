/**
 * End to end: the real `tollgate serve` process, a user and key made with the real CLI, the official
 * `openai` SDK as the client, the OpenAI simulator as the upstream, and the `llm_requests` rows read
 * back from the real SQLite file.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import OpenAI from 'openai';
import { openTestStore, testDatabaseUrl, TEST_STORE_ENGINE } from '../helpers/test-store.ts';
import { startOpenAISimulator, simStreamText, SIM_REPLY, SIM_USAGE, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/gateway-process.ts';
import { cliJson, runCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';
import { defaultManifest } from '../../core/default-manifest.ts';
import { eventually } from '../helpers/eventually.ts';
import type { Selectable } from 'kysely';
import type { LlmRequestsTable } from '../../core/store/db-types.ts';

const manifest = structuredClone(defaultManifest) as { plugins: Array<{ name: string; config: Record<string, unknown> }> };
manifest.plugins.find((p) => p.name === 'logger')!.config = { flushIntervalMs: 20 };

let sim: OpenAISimulator;
let gateway: GatewayProcess;
let dataDir: string;
let apiKey: string;
let keyId: number;
let userId: number;
let client: OpenAI;

type Row = Selectable<LlmRequestsTable>;

/** Waits for the background logger to write the row of `requestId` (up to 30 s: a liveness bound, for a busy machine). */
async function logRow(requestId: string): Promise<Row> {
  const store = await openTestStore(dataDir);
  try {
    for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
      const row = await store.db.selectFrom('llm_requests').selectAll().where('request_id', '=', requestId).executeTakeFirst();
      if (row) return row;
      await new Promise((r) => setTimeout(r, 30));
    }
  } finally {
    await store.close();
  }
  throw new Error(`no llm_requests row for ${requestId}`);
}

const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Say hello' }];

before(async () => {
  sim = await startOpenAISimulator();
  dataDir = tempDir();
  const user = await cliJson<{ id: number }>(['users', 'create', '--name', 'e2e-user'], { dataDir });
  userId = user.id;
  const key = await cliJson<{ id: number; key: string; user_id: number }>(['keys', 'create', '--user', 'e2e-user', '--name', 'sdk'], { dataDir });
  apiKey = key.key;
  keyId = key.id;
  gateway = await startGatewayProcess({ dataDir, manifest, env: { OPENAI_BASE_URL: sim.baseUrl, OPENAI_API_KEY: 'sk-upstream-secret' } });
  client = new OpenAI({ apiKey, baseURL: gateway.baseURL, maxRetries: 0 });
});

after(async () => {
  await gateway?.stop();
  await sim?.close();
});

/** The value of a `  Label:   value` line of a gateway process's banner, or undefined. */
const bannerValue = (output: string, label: string) => new RegExp(`^  ${label}: +(.*)$`, 'm').exec(output)?.[1];

describe('the start-up banner', () => {
  test('names the database: the SQLite file, or the PostgreSQL URL without its password', async () => {
    if (TEST_STORE_ENGINE === 'sqlite') {
      assert.equal(bannerValue(gateway.output(), 'Database'), join(dataDir, 'tollgate.db'));
      return;
    }
    // The test server trusts every connection, so a password in the URL is accepted and must not be shown.
    const url = new URL((await testDatabaseUrl(dataDir))!);
    url.password = 'banner-secret';
    const other = await startGatewayProcess({ dataDir: tempDir(), manifest, env: { TOLLGATE_DATABASE_URL: url.toString() } });
    try {
      url.password = '***';
      assert.equal(bannerValue(other.output(), 'Database'), url.toString());
      assert.doesNotMatch(other.output(), /banner-secret/);
    } finally {
      await other.stop();
    }
  });
});

describe('chat completions through the real gateway process with the openai SDK', () => {
  test('a non-streamed completion returns the upstream answer and usage, and is logged', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'openai/gpt-4o-mini', messages })
      .withResponse();
    assert.equal(data.choices[0]!.message.content, SIM_REPLY);
    assert.deepEqual(data.usage, SIM_USAGE);
    const requestId = response.headers.get('x-request-id')!;
    assert.match(requestId, /^req_[0-9a-f]{32}$/);

    const upstream = sim.requests.at(-1)!;
    assert.equal(upstream.headers.authorization, 'Bearer sk-upstream-secret');
    assert.equal(upstream.body!.model, 'gpt-4o-mini');
    assert.equal(upstream.body!.stream_options, undefined);

    const row = await logRow(requestId);
    assert.deepEqual(
      { ...row, latency_ms: typeof row.latency_ms, ttft_ms: typeof row.ttft_ms },
      {
        ...row,
        request_id: requestId, gateway_user_id: userId, api_key_id: keyId, provider: 'openai',
        model_requested: 'openai/gpt-4o-mini', model_served: 'gpt-4o-mini', status: 200, error_code: null,
        prompt_tokens: 19, completion_tokens: 24, cached_tokens: 3, stream: 0, latency_ms: 'number', ttft_ms: 'number',
      },
    );
  });

  test('a stream without include_usage delivers every delta, hides the usage chunk, and is billed from it', async () => {
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages, stream: true })
      .withResponse();
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    assert.equal(text, simStreamText());
    assert.equal(chunks.at(-1)!.choices[0]!.finish_reason, 'stop');
    assert.ok(chunks.every((c) => c.choices.length === 1 && c.usage == null), 'no usage chunk reaches a client that did not ask');
    assert.equal((sim.requests.at(-1)!.body!.stream_options as { include_usage: boolean }).include_usage, true);

    const row = await logRow(response.headers.get('x-request-id')!);
    assert.equal(row.stream, 1);
    assert.equal(row.model_requested, 'gpt-4o-mini');
    assert.deepEqual([row.prompt_tokens, row.completion_tokens, row.cached_tokens], [19, 24, 3]);
    assert.equal(typeof row.ttft_ms, 'number');
    assert.ok(row.ttft_ms! <= row.latency_ms);
  });

  test('a stream with include_usage ends with the usage chunk the client asked for', async () => {
    const stream = await client.chat.completions.create({
      model: 'openai/gpt-4o-mini', messages, stream: true, stream_options: { include_usage: true },
    });
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    const last = chunks.at(-1)!;
    assert.deepEqual(last.choices, []);
    assert.deepEqual(last.usage, SIM_USAGE);
    assert.equal(chunks.filter((c) => c.usage).length, 1);
  });

  test('the model list has provider-prefixed ids', async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    assert.ok(ids.includes('openai/gpt-4o-mini'), ids.join(','));
    assert.ok(ids.every((id) => id.startsWith('openai/')));
  });
});

describe('errors a client sees', () => {
  test('an unknown key gets 401 invalid_api_key with WWW-Authenticate', async () => {
    const bad = new OpenAI({ apiKey: 'tg_not-a-real-key', baseURL: gateway.baseURL, maxRetries: 0 });
    const err = await bad.chat.completions.create({ model: 'openai/gpt-4o-mini', messages }).catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.AuthenticationError);
    assert.equal(err.status, 401);
    assert.equal(err.code, 'invalid_api_key');
    assert.equal(err.type, 'authentication_error');
    assert.equal(err.headers.get('www-authenticate'), 'Bearer');
    assert.match(err.headers.get('x-request-id') ?? '', /^req_/);
  });

  test('malformed JSON gets 400 invalid_request in the contract body', async () => {
    const res = await fetch(`${gateway.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: '{"model": "openai/gpt-4o-mini", "messages": [',
    });
    assert.equal(res.status, 400);
    assert.match(res.headers.get('x-request-id') ?? '', /^req_/);
    const body = (await res.json()) as { error: Record<string, unknown> };
    assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type']);
    assert.equal(body.error.type, 'invalid_request_error');
    assert.equal(body.error.code, 'invalid_request');
    assert.match(String(body.error.message), /not valid JSON/);
  });

  test('an upstream 500 becomes a 502 upstream_error, logged', async () => {
    const err = await client.chat.completions.create({ model: 'openai/sim-500', messages }).catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.APIError);
    assert.equal(err.status, 502);
    assert.equal(err.type, 'upstream_error');
    assert.match(err.message, /answered 500/);
    const row = await logRow(err.requestID!);
    assert.equal(row.status, 502);
    assert.equal(row.error_code, 'upstream_error');
  });

  test('an upstream 429 keeps its status and Retry-After', async () => {
    const err = await client.chat.completions.create({ model: 'openai/sim-429', messages }).catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.RateLimitError);
    assert.equal(err.code, 'rate_limit_exceeded');
    assert.equal(err.headers.get('retry-after'), '2');
  });

  test('an upstream 401 does not leak the upstream message (which echoes the provider key)', async () => {
    const err = await client.chat.completions.create({ model: 'openai/sim-401', messages }).catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.APIError);
    assert.equal(err.status, 401);
    assert.doesNotMatch(err.message, /sk-upst/);
    assert.match(err.message, /rejected the gateway's credential/);
  });
});

describe('client disconnects and revocation', () => {
  test('a client abort mid-stream closes the upstream connection and is logged as 499', async () => {
    const upstreamAborted = sim.nextAbort();
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'openai/sim-drip', messages, stream: true })
      .withResponse();
    let received = 0;
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) received++;
      if (received === 3) break; // breaking out of the SDK's iterator aborts the HTTP request
    }
    await upstreamAborted;
    const row = await logRow(response.headers.get('x-request-id')!);
    assert.equal(row.status, 499);
    assert.equal(row.error_code, 'client_disconnected');
    assert.equal(row.stream, 1);
  });

  test('a key revoked with the CLI is refused by the running gateway, which had it cached as valid', async () => {
    const extra = await cliJson<{ id: number; key: string }>(['keys', 'create', '--user', String(userId)], { dataDir });
    const extraClient = new OpenAI({ apiKey: extra.key, baseURL: gateway.baseURL, maxRetries: 0 });
    await extraClient.chat.completions.create({ model: 'openai/gpt-4o-mini', messages }); // cached as valid
    const revoked = await runCli(['keys', 'revoke', String(extra.id)], { dataDir });
    assert.equal(revoked.code, 0, revoked.stderr);
    // The key cache has no TTL: only the change feed (a poll every 250 ms on SQLite) makes the
    // gateway refuse it. How soon is a speed, for an idle machine; that it happens is what is tested.
    await eventually(async () => {
      const err = await extraClient.chat.completions.create({ model: 'openai/gpt-4o-mini', messages }).catch((e: unknown) => e);
      assert.ok(err instanceof OpenAI.AuthenticationError, 'the revoked key is still accepted');
    }, { intervalMs: 50 });
  });
});
