/**
 * The rate-limit plugin in the whole in-process gateway, with a hand-moved clock: rpm and tpm per
 * user and per key, the 429 and its headers, recovery, token reservations settled to the usage the
 * OpenAI simulator reports (prompt 19 + completion 24 = 43 tokens), the manifest defaults, the
 * metered operations that call no model (`count_tokens`, `models.retrieve`: rpm and concurrency, not
 * tokens; logged at cost 0) and the endpoints that are not limited. Also the header format and the
 * service other plugins read.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import OpenAI from 'openai';
import { startOpenAISimulator, SIM_USAGE, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { manualClock, startTestGateway, type ManualClock, type TestGateway } from '../helpers/test-gateway.ts';
import { createGatewayUser } from '../../core/accounts/gateway-users.ts';
import { createApiKey } from '../../core/accounts/api-keys.ts';
import { createServiceRegistry } from '../../core/services.ts';
import { createLocalRateCounters } from '../../core/coordination/rate-counters.ts';
import type { Exchange, Principal } from '../../core/exchange.ts';
import type { PluginContext } from '../../core/plugin.ts';
import { GatewayError } from '../../core/errors.ts';
import { rateLimit } from '../../plugins/rate-limit/index.ts';
import { pluginRegistry } from '../../plugins/index.ts';
import { validateManifest } from '../../core/manifest.ts';
import { formatResetDuration } from '../../plugins/rate-limit/headers.ts';
import type { RateLimitConfig } from '../../plugins/rate-limit/schema.ts';

/** Prompt tokens the gateway counts for `[{ role: 'user', content: 'hi' }]`: 3 priming + 3 per message + "user" + "hi". */
const HI_PROMPT_TOKENS = 8;
/** What a token limit reserves for that prompt: its byte bound (`promptTokensBound`), "hi" as its 2 bytes. */
const HI_PROMPT_RESERVED = 9;
const SETTLED_TOKENS = SIM_USAGE.prompt_tokens + SIM_USAGE.completion_tokens;

let sim: OpenAISimulator;
let clock: ManualClock;
let tg: TestGateway;
let callers = 0;

before(async () => {
  sim = await startOpenAISimulator();
  clock = manualClock(Date.UTC(2026, 10, 21, 12));
  tg = await startTestGateway({
    providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-test' } },
    clock,
    user: { rpm: 3 },
  });
});

after(async () => {
  await tg?.close();
  await sim?.close();
});

/** A new gateway user with these limits and one key (with its own limits); returns the key. */
async function newCaller(gateway: TestGateway, user: { rpm?: number; tpm?: number; maxConcurrent?: number }, key: { rpm?: number; tpm?: number } = {}) {
  const created = await createGatewayUser(gateway.gateway.store.db, { name: `rl-caller-${++callers}`, ...user });
  const apiKey = await createApiKey(gateway.gateway.store.db, { gatewayUserId: created.id, ...key });
  return { userId: created.id, key: apiKey.key };
}

function chat(key: string, body: Record<string, unknown> = {}, gateway = tg) {
  return fetch(`${gateway.gateway.origin}/api/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], ...body }),
  });
}

/** The response's `x-ratelimit-*` headers (absent ones left out). */
function rateHeaders(headers: Headers): Record<string, string> {
  return Object.fromEntries([...headers].filter(([name]) => name.startsWith('x-ratelimit-')));
}

/** Reads the body, then waits until the logger wrote the row: the rate limit settled before it. */
async function settled(res: Response): Promise<void> {
  await res.arrayBuffer();
  await tg.logRow(res.headers.get('x-request-id')!);
}

describe('requests per minute', () => {
  const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'hi' }];

  test('with rpm 3 the 4th request in a minute gets 429 with retry-after and exact x-ratelimit headers', async () => {
    const forwardedBefore = sim.requests.length;
    const seen: Array<Record<string, string>> = [];
    for (let i = 0; i < 3; i++) {
      const { response } = await tg.client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages }).withResponse();
      seen.push(rateHeaders(response.headers));
    }
    assert.deepEqual(seen, [
      { 'x-ratelimit-limit-requests': '3', 'x-ratelimit-remaining-requests': '2', 'x-ratelimit-reset-requests': '20s' },
      { 'x-ratelimit-limit-requests': '3', 'x-ratelimit-remaining-requests': '1', 'x-ratelimit-reset-requests': '40s' },
      { 'x-ratelimit-limit-requests': '3', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '1m0s' },
    ]);

    const refused = await tg.client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages }).then(
      () => assert.fail('the 4th request was served'),
      (err: unknown) => err,
    );
    assert.ok(refused instanceof OpenAI.APIError);
    assert.equal(refused.status, 429);
    assert.equal(refused.type, 'rate_limit_error');
    assert.equal(refused.code, 'rate_limit_exceeded');
    assert.equal(refused.message, '429 Rate limit reached: 3 requests per minute for your gateway user. Retry in 20 s.');
    assert.equal(refused.headers.get('retry-after'), '20');
    assert.equal(refused.headers.get('retry-after-ms'), '20000');
    assert.deepEqual(rateHeaders(refused.headers), {
      'x-ratelimit-limit-requests': '3', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '1m0s',
    });
    assert.equal(sim.requests.length - forwardedBefore, 3, 'the refused request never reached the upstream');
  });

  test('model lists and the account endpoint are not limited, even with the rpm spent', async () => {
    for (const path of ['/api/v1/models', '/api/v1/models', '/api/account']) {
      const res = await fetch(`${tg.gateway.origin}${path}`, { headers: { authorization: `Bearer ${tg.apiKey}` } });
      await res.arrayBuffer();
      assert.notEqual(res.status, 429, path);
      assert.deepEqual(rateHeaders(res.headers), {}, path);
    }
  });

  test('a 429 takes nothing: after exactly the retry-after the next request passes', async () => {
    clock.advance(19_999);
    const early = await chat(tg.apiKey);
    assert.equal(early.status, 429);
    assert.equal(early.headers.get('retry-after-ms'), '1');
    assert.equal(early.headers.get('retry-after'), '1');
    await early.arrayBuffer();

    clock.advance(1);
    const res = await chat(tg.apiKey);
    assert.equal(res.status, 200);
    assert.deepEqual(rateHeaders(res.headers), {
      'x-ratelimit-limit-requests': '3', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '1m0s',
    });
    await res.arrayBuffer();

    clock.advance(60_000);
    const full = await chat(tg.apiKey);
    assert.equal(full.headers.get('x-ratelimit-remaining-requests'), '2', 'a quiet minute refills the whole burst');
    await full.arrayBuffer();
  });

  test('an upstream error still counts as a request and carries the headers', async () => {
    const caller = await newCaller(tg, { rpm: 2 });
    const failed = await chat(caller.key, { model: 'openai/sim-500' });
    assert.equal(failed.status, 502);
    assert.deepEqual(rateHeaders(failed.headers), {
      'x-ratelimit-limit-requests': '2', 'x-ratelimit-remaining-requests': '1', 'x-ratelimit-reset-requests': '30s',
    });
    await settled(failed);
    const next = await chat(caller.key);
    assert.equal(next.headers.get('x-ratelimit-remaining-requests'), '0');
    await next.arrayBuffer();
  });

  test('a key limit tighter than the user\'s applies, and its 429 takes nothing from the user\'s limit', async () => {
    const caller = await newCaller(tg, { rpm: 10 }, { rpm: 1 });
    const first = await chat(caller.key);
    assert.equal(first.status, 200);
    assert.deepEqual(rateHeaders(first.headers), {
      'x-ratelimit-limit-requests': '1', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '1m0s',
    }, 'the key\'s limit has less remaining, so it is the one shown');
    await first.arrayBuffer();

    const refused = await chat(caller.key);
    assert.equal(refused.status, 429);
    const { error } = (await refused.json()) as { error: { message: string; type: string; code: string } };
    assert.equal(error.message, 'Rate limit reached: 1 request per minute for this API key. Retry in 60 s.');
    assert.equal(refused.headers.get('retry-after'), '60');
    assert.equal(refused.headers.get('retry-after-ms'), '60000');

    const otherKey = await createApiKey(tg.gateway.store.db, { gatewayUserId: caller.userId });
    const viaOther = await chat(otherKey.key);
    assert.equal(viaOther.status, 200);
    assert.deepEqual(rateHeaders(viaOther.headers), {
      'x-ratelimit-limit-requests': '10', 'x-ratelimit-remaining-requests': '8', 'x-ratelimit-reset-requests': '12s',
    }, 'the user counted 2 requests: the 429 took nothing');
    await viaOther.arrayBuffer();
  });

  test('a user without limits gets no rate-limit headers', async () => {
    const caller = await newCaller(tg, {});
    const res = await chat(caller.key);
    assert.equal(res.status, 200);
    assert.deepEqual(rateHeaders(res.headers), {});
    await res.arrayBuffer();
  });
});

describe('tokens per minute', () => {
  test('the reservation counts max_tokens, and the response settles it to the reported usage', async () => {
    const caller = await newCaller(tg, { tpm: 1_000 });
    const first = await chat(caller.key, { max_tokens: 100 });
    assert.equal(first.status, 200);
    assert.deepEqual(rateHeaders(first.headers), {
      'x-ratelimit-limit-tokens': '1000',
      'x-ratelimit-remaining-tokens': String(1_000 - HI_PROMPT_RESERVED - 100),
      'x-ratelimit-reset-tokens': '6.54s',
    });
    await settled(first);

    const second = await chat(caller.key, { max_tokens: 100 });
    assert.equal(second.headers.get('x-ratelimit-remaining-tokens'), String(1_000 - SETTLED_TOKENS - HI_PROMPT_RESERVED - 100));
    assert.equal(second.headers.get('x-ratelimit-reset-tokens'), '9.12s');
    await second.arrayBuffer();
  });

  test('the request after the allowance is refused with the exact wait, and passes after it', async () => {
    const caller = await newCaller(tg, { tpm: 1_000 });
    await settled(await chat(caller.key, { max_tokens: 500 }));

    // 43 settled + 959 (the byte bound) refused, so the prompt is counted: 43 + 958 reserved = 1001 >
    // 1000, one token short, 60 ms (60000 / 1000 per token).
    const refused = await chat(caller.key, { max_tokens: 950 });
    assert.equal(refused.status, 429);
    const { error } = (await refused.json()) as { error: { message: string; type: string; code: string } };
    assert.equal(error.type, 'rate_limit_error');
    assert.equal(error.code, 'rate_limit_exceeded');
    assert.match(error.message, /^Rate limit reached: 1000 tokens per minute for your gateway user; this request reserves 958 tokens /);
    assert.equal(refused.headers.get('retry-after'), '1');
    assert.equal(refused.headers.get('retry-after-ms'), '60');
    assert.deepEqual(rateHeaders(refused.headers), {
      'x-ratelimit-limit-tokens': '1000', 'x-ratelimit-remaining-tokens': '957', 'x-ratelimit-reset-tokens': '2.58s',
    });

    clock.advance(60);
    const passed = await chat(caller.key, { max_tokens: 950 });
    assert.equal(passed.status, 200);
    assert.deepEqual(rateHeaders(passed.headers), {
      'x-ratelimit-limit-tokens': '1000', 'x-ratelimit-remaining-tokens': '0', 'x-ratelimit-reset-tokens': '1m0s',
    });
    await passed.arrayBuffer();
  });

  test('a request the prompt\'s byte bound does not fit but its count does is served, reserving the count', async () => {
    const caller = await newCaller(tg, { tpm: 1_000 });
    await settled(await chat(caller.key, { max_tokens: 500 }));
    // 43 settled: 957 left. The bound reserves 9 + 948 = 957 (fits), then 9 + 949 = 958 (refused):
    // counted, 8 + 949 = 957 fits exactly.
    const served = await chat(caller.key, { max_tokens: 949 });
    assert.equal(served.status, 200);
    assert.equal(served.headers.get('x-ratelimit-remaining-tokens'), '0');
    await settled(served);
    assert.equal(1_000 - SETTLED_TOKENS - HI_PROMPT_TOKENS - 949, 0);
  });

  test('max_completion_tokens wins over max_tokens, and neither reserves maxOutputTokensEstimate (4096)', async () => {
    const caller = await newCaller(tg, { tpm: 10_000 });
    const both = await chat(caller.key, { max_completion_tokens: 50, max_tokens: 500 });
    assert.equal(both.headers.get('x-ratelimit-remaining-tokens'), String(10_000 - HI_PROMPT_RESERVED - 50));
    await settled(both);
    const neither = await chat(caller.key);
    assert.equal(neither.headers.get('x-ratelimit-remaining-tokens'), String(10_000 - SETTLED_TOKENS - HI_PROMPT_RESERVED - 4_096));
    await neither.arrayBuffer();
  });

  test('a request that reaches no upstream is settled to zero tokens', async () => {
    const caller = await newCaller(tg, { rpm: 100, tpm: 1_000 });
    const failed = await chat(caller.key, { model: 'openai/sim-500', max_tokens: 200 });
    assert.equal(failed.status, 502);
    assert.deepEqual(rateHeaders(failed.headers), {
      'x-ratelimit-limit-requests': '100', 'x-ratelimit-remaining-requests': '99', 'x-ratelimit-reset-requests': '600ms',
      'x-ratelimit-limit-tokens': '1000', 'x-ratelimit-remaining-tokens': '791', 'x-ratelimit-reset-tokens': '12.54s',
    });
    await settled(failed);
    const next = await chat(caller.key, { max_tokens: 200 });
    assert.equal(next.headers.get('x-ratelimit-remaining-tokens'), '791', 'the failed request\'s reservation was given back');
    assert.equal(next.headers.get('x-ratelimit-remaining-requests'), '98', 'but it still counted as a request');
    await next.arrayBuffer();
  });

  test('a stream carries the headers and is settled to the usage it reported', async () => {
    const caller = await newCaller(tg, { tpm: 2_000 });
    const stream = await chat(caller.key, { stream: true, max_tokens: 300 });
    assert.equal(stream.status, 200);
    assert.equal(stream.headers.get('x-ratelimit-remaining-tokens'), String(2_000 - HI_PROMPT_RESERVED - 300));
    await settled(stream);
    const next = await chat(caller.key, { max_tokens: 300 });
    assert.equal(next.headers.get('x-ratelimit-remaining-tokens'), String(2_000 - SETTLED_TOKENS - HI_PROMPT_RESERVED - 300));
    await next.arrayBuffer();
  });

  test('a key tpm tighter than the user\'s is the one shown and enforced', async () => {
    const caller = await newCaller(tg, { tpm: 100_000 }, { tpm: 500 });
    const res = await chat(caller.key, { max_tokens: 470 });
    assert.deepEqual(rateHeaders(res.headers), {
      'x-ratelimit-limit-tokens': '500', 'x-ratelimit-remaining-tokens': '21', 'x-ratelimit-reset-tokens': '57.48s',
    });
    await settled(res);
    // 43 settled + 479 (the bound) refused; counted, 43 + 478 reserved = 521: 21 tokens over, 120 ms
    // each at 500 per minute.
    const refused = await chat(caller.key, { max_tokens: 470 });
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('retry-after-ms'), '2520');
    const { error } = (await refused.json()) as { error: { message: string } };
    assert.match(error.message, /500 tokens per minute for this API key/);
  });
});

describe('metered operations: count_tokens and models.retrieve', () => {
  /** `POST /api/v1/messages/count_tokens` (counted locally: the OpenAI provider has no counting endpoint). */
  function countTokens(key: string, text = 'hi') {
    return fetch(`${tg.gateway.origin}/api/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: text }] }),
    });
  }
  const retrieve = (key: string) => fetch(`${tg.gateway.origin}/api/v1/models/openai%2Fgpt-4o-mini`, { headers: { authorization: `Bearer ${key}` } });

  test('take from the user\'s rpm with model calls: past it each gets 429 in its dialect\'s shape, and every call is logged at cost 0', async () => {
    const caller = await newCaller(tg, { rpm: 3 });
    const served = [await countTokens(caller.key), await retrieve(caller.key), await countTokens(caller.key)];
    for (const res of served) assert.equal(res.status, 200, await res.clone().text());
    assert.deepEqual(rateHeaders(served[2]!.headers), { 'x-ratelimit-limit-requests': '3', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '1m0s' });

    const counting = await countTokens(caller.key);
    assert.equal(counting.status, 429);
    assert.equal(counting.headers.get('retry-after'), '20');
    const anthropicShape = (await counting.json()) as { type: string; error: { type: string; message: string } };
    assert.deepEqual([anthropicShape.type, anthropicShape.error.type], ['error', 'rate_limit_error']);
    assert.match(anthropicShape.error.message, /3 requests per minute/);
    const retrieving = await retrieve(caller.key);
    assert.equal(retrieving.status, 429);
    assert.equal(((await retrieving.json()) as { error: { code: string } }).error.code, 'rate_limit_exceeded');
    const chatting = await chat(caller.key);
    assert.equal(chatting.status, 429, 'they spent the same rpm as model calls');
    await chatting.arrayBuffer();

    const rows = await Promise.all([...served, counting, retrieving].map((res) => tg.logRow(res.headers.get('x-request-id')!)));
    assert.deepEqual(
      rows.map((row) => [row.endpoint, row.status, row.cost_nanos, row.model_requested]),
      [
        ['messages.count_tokens', 200, 0, 'openai/gpt-4o-mini'], ['models.retrieve', 200, 0, 'openai/gpt-4o-mini'],
        ['messages.count_tokens', 200, 0, 'openai/gpt-4o-mini'], ['messages.count_tokens', 429, 0, 'openai/gpt-4o-mini'],
        ['models.retrieve', 429, 0, 'openai/gpt-4o-mini'],
      ],
    );
  });

  test('a token limit does not apply to a token count: it generates nothing', async () => {
    const caller = await newCaller(tg, { tpm: 10 });
    const res = await countTokens(caller.key, 'a longer prompt than ten tokens could ever hold, counted anyway '.repeat(4));
    assert.equal(res.status, 200, await res.clone().text());
    assert.ok(((await res.json()) as { input_tokens: number }).input_tokens > 10);
    assert.equal(res.headers.get('x-ratelimit-limit-tokens'), null);
  });

  test('take a concurrency slot: with a model call in flight, a user limited to one gets 429 concurrency_limit_exceeded', async () => {
    const caller = await newCaller(tg, { maxConcurrent: 1 });
    sim.fault({ model: 'gpt-4o-held' }, 200, {}, 400);
    try {
      const before = sim.requests.length;
      const held = chat(caller.key, { model: 'openai/gpt-4o-held' });
      while (sim.requests.length === before) await new Promise((resolve) => setTimeout(resolve, 5));
      const counting = await countTokens(caller.key);
      assert.equal(counting.status, 429);
      const body = (await counting.json()) as { error: { type: string; message: string } };
      assert.deepEqual([body.error.type, counting.headers.get('x-ratelimit-limit-concurrency')], ['rate_limit_error', '1']);
      assert.match(body.error.message, /in flight/);
      const first = await held;
      assert.equal(first.status, 200);
      await settled(first);
      assert.equal((await countTokens(caller.key)).status, 200, 'the slot is free again');
    } finally {
      sim.fault({ model: 'gpt-4o-held' }, null);
    }
  });
});

describe('manifest defaults', () => {
  let defaults: TestGateway;
  before(async () => {
    defaults = await startTestGateway({
      providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-test' } },
      clock: manualClock(Date.UTC(2026, 10, 21, 12)),
      config: { 'rate-limit': { defaultRpm: 2, defaultTpm: 5_000 } },
    });
  });
  after(() => defaults?.close());

  test('defaultRpm and defaultTpm apply to a user without limits', async () => {
    const res = await chat(defaults.apiKey, { max_tokens: 10 }, defaults);
    assert.equal(res.status, 200);
    assert.deepEqual(rateHeaders(res.headers), {
      'x-ratelimit-limit-requests': '2', 'x-ratelimit-remaining-requests': '1', 'x-ratelimit-reset-requests': '30s',
      'x-ratelimit-limit-tokens': '5000', 'x-ratelimit-remaining-tokens': '4981', 'x-ratelimit-reset-tokens': '228ms',
    });
    await res.arrayBuffer();
    await (await chat(defaults.apiKey, {}, defaults)).arrayBuffer();
    const refused = await chat(defaults.apiKey, {}, defaults);
    assert.equal(refused.status, 429);
    await refused.arrayBuffer();
  });

  test('a user\'s own rpm replaces the default, and the default tpm still applies', async () => {
    const caller = await newCaller(defaults, { rpm: 5 });
    const res = await chat(caller.key, { max_tokens: 10 }, defaults);
    assert.equal(res.headers.get('x-ratelimit-limit-requests'), '5');
    assert.equal(res.headers.get('x-ratelimit-limit-tokens'), '5000');
    await res.arrayBuffer();
  });
});

describe('config schema', () => {
  const validate = (config: Record<string, unknown>) =>
    validateManifest({ plugins: [{ name: 'rate-limit', config }, { name: 'provider-router', config: { providers: {} } }] }, pluginRegistry, { env: {} });

  test('an empty config means no default rate limits, 64 requests in flight per user and a 4096-token output reservation', () => {
    assert.deepEqual(validate({}).plugins[0]!.config, { defaultRpm: null, defaultTpm: null, maxOutputTokensEstimate: 4096, defaultMaxConcurrent: 64, maxConcurrentPerKey: null });
  });

  test('explicit values are kept', () => {
    const config = { defaultRpm: 60, defaultTpm: null, maxOutputTokensEstimate: 1, defaultMaxConcurrent: null, maxConcurrentPerKey: 3 };
    assert.deepEqual(validate(config).plugins[0]!.config, config);
  });

  const rejected: Array<[Record<string, unknown>, string]> = [
    [{ defaultRpm: 0 }, '/plugins/0/config/defaultRpm: must be >= 1'],
    [{ defaultTpm: 1.5 }, '/plugins/0/config/defaultTpm: must be integer,null'],
    [{ defaultRpm: '3' }, '/plugins/0/config/defaultRpm: must be integer,null'],
    [{ maxOutputTokensEstimate: 0 }, '/plugins/0/config/maxOutputTokensEstimate: must be >= 1'],
    [{ rpm: 3 }, '/plugins/0/config/rpm: unknown field'],
  ];
  for (const [config, message] of rejected) {
    test(`rejects ${JSON.stringify(config)}`, () => {
      assert.throws(() => validate(config), (err: Error) => err.message.includes(message));
    });
  }
});

describe('reset duration format (OpenAI\'s, Go time.Duration)', () => {
  const cases: Array<[number, string]> = [
    [0, '0s'], [-5, '0s'], [1, '1ms'], [20, '20ms'], [999, '999ms'], [1_000, '1s'], [1_500, '1.5s'],
    [59_500, '59.5s'], [6_480, '6.48s'], [60_000, '1m0s'], [60_250, '1m0.25s'], [360_000, '6m0s'],
    [3_600_000, '1h0m0s'], [3_723_004, '1h2m3.004s'], [20.2, '21ms'],
  ];
  for (const [ms, text] of cases) {
    test(`${ms} ms is "${text}"`, () => assert.equal(formatResetDuration(ms), text));
  }
});

describe('the rateLimit service', () => {
  const principal = (over: Partial<Principal> = {}): Principal => ({
    gatewayUserId: 1, gatewayUserName: 'u', apiKeyId: 7, rpm: null, tpm: null, keyRpm: null, keyTpm: null, ...over,
  });

  async function setup(config: Partial<RateLimitConfig> = {}) {
    const services = createServiceRegistry();
    let nowMs = 1_000_000;
    const ctx = {
      services,
      clock: () => nowMs,
      tokens: { ready: () => null, readyFor: () => null, promptTokensBound: () => null, promptTokens: () => 10, count: () => 0, completionTokens: () => 0 },
      rateCounters: createLocalRateCounters(() => nowMs),
      budgetCounters: null,
    } as unknown as PluginContext;
    const plugin = (await rateLimit.create({ defaultRpm: null, defaultTpm: null, maxOutputTokensEstimate: 4096, ...config }, ctx));
    const request = async (p: Principal) => {
      const ex = { operation: 'chat.completions', principal: p, request: { model: 'm', messages: [], max_tokens: 90 }, responseHeaders: {}, usage: null } as unknown as Exchange;
      await plugin.onRequest!(ex, plugin.createState!(ex));
      return ex;
    };
    return { service: services.get('rateLimit')!, request, plugin, advance: (ms: number) => (nowMs += ms) };
  }

  test('in one process, admits, refuses and settles without a promise (no microtask per request)', async () => {
    const { plugin } = await setup({ defaultMaxConcurrent: 1 });
    const exchange = () => ({ operation: 'chat.completions', principal: principal({ rpm: 1, tpm: 1_000 }), request: { model: 'm', messages: [], max_tokens: 90 }, responseHeaders: {}, usage: null }) as unknown as Exchange;
    const ex = exchange();
    const state = plugin.createState!(ex);
    const admitted = plugin.onRequest!(ex, state);
    assert.equal(admitted instanceof Promise, false);
    assert.equal((ex.responseHeaders)['x-ratelimit-remaining-requests'], '0');
    const second = exchange();
    assert.throws(() => plugin.onRequest!(second, plugin.createState!(second)), (err: unknown) => err instanceof GatewayError && err.code === 'concurrency_limit_exceeded');
    assert.equal(plugin.onResponseEnd!(ex, state) instanceof Promise, false);
    assert.throws(() => plugin.onRequest!(second, plugin.createState!(second)), (err: unknown) => err instanceof GatewayError && err.status === 429 && /1 request per minute/.test(err.message));
  });

  test('reports null for limits that do not apply', async () => {
    const { service } = await setup();
    assert.deepEqual(await service.statusOf(principal()), { requests: null, tokens: null });
  });

  test('reports the tighter of the user and key limits, as the headers do', async () => {
    const { service, request, advance } = await setup({ defaultTpm: 1_000 });
    const p = principal({ rpm: 10, keyRpm: 2 });
    assert.deepEqual(await service.statusOf(p), { requests: { limit: 2, remaining: 2, resetMs: 0 }, tokens: { limit: 1_000, remaining: 1_000, resetMs: 0 } });
    await request(p);
    advance(3_000);
    assert.deepEqual(await service.statusOf(p), {
      requests: { limit: 2, remaining: 1, resetMs: 27_000 },
      tokens: { limit: 1_000, remaining: 950, resetMs: 3_000 },
    });
  });

  test('a refused request leaves every limit as it was', async () => {
    const { service, request } = await setup();
    const p = principal({ rpm: 5, tpm: 150 });
    await request(p);
    const before = await service.statusOf(p);
    await assert.rejects(request(p), (err: unknown) => err instanceof GatewayError && err.status === 429 && /150 tokens per minute/.test(err.message));
    assert.deepEqual(await service.statusOf(p), before);
    assert.equal(before.requests?.remaining, 4);
  });
});
