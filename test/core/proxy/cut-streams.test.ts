/**
 * Answers the upstream cuts after its head (issue 42 item 1), through the whole gateway in front of a
 * real upstream on 127.0.0.1 (`hostile-upstream.ts`) that sends the start of an answer, then resets
 * its socket, closes without the terminal event, or closes mid-event: for every client dialect, both
 * translated and passed through natively, streamed and not. Each cut answer is logged with its error
 * code, the tokens sent so far (the prompt, and what was streamed, counted locally:
 * `usage_estimated` = 1), a cost, and that cost in the user's spend; the stream ends with the
 * dialect's error event. An upstream that stops sending is given up on after `upstream.bodyTimeoutMs`
 * and recorded as `upstream_timeout`, billed the same way. A deployment whose streams are cut opens its circuit breaker, and a cut
 * half-open probe opens it again. A client that leaves mid-stream is billed for what was streamed,
 * and its exit does not count against the upstream.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock, startTestGateway, type ManualClock, type TestGateway } from '../../helpers/test-gateway.ts';
import { startHostileUpstream, type HostileUpstream } from '../../helpers/hostile-upstream.ts';
import { dataDirWithPrices } from '../../helpers/prices.ts';
import { eventually } from '../../helpers/eventually.ts';

const COOLDOWN_MS = 30_000;
const PROMPT = 'Tell me about cut streams, in a few words.';

let upstream: HostileUpstream;
let clock: ManualClock;
let tg: TestGateway;

before(async () => {
  upstream = await startHostileUpstream();
  // Dear prices, so every cut answer costs a visible amount: USD per million tokens.
  const dataDir = await dataDirWithPrices(['cut-reset', 'cut-close', 'cut-tail', 'cut-stall', 'cut-slow', 'cut-breaker'].map((model) => ({ model, input: 1000, output: 2000 })));
  clock = manualClock(Date.parse('2026-11-02T10:00:00Z'));
  tg = await startTestGateway({
    dataDir,
    clock,
    user: { budgetUsd: 1000 },
    // A silent upstream (`cut-stall`) is given up on after 3 s: not less, a loaded CI machine can pause a
    // healthy stream for a second; every other answer here streams without pauses.
    upstream: { bodyTimeoutMs: 3000 },
    providers: {
      openai: { type: 'openai', baseUrl: upstream.baseUrl, apiKey: 'sk-cut-openai' },
      anthropic: { type: 'anthropic', baseUrl: upstream.baseUrl, apiKey: 'sk-ant-cut' },
      gemini: { type: 'gemini', baseUrl: upstream.geminiBaseUrl, apiKey: 'gemini-cut-key' },
    },
    router: {
      models: {
        flaky: { deployments: [{ provider: 'openai', model: 'cut-breaker' }] },
        patient: { deployments: [{ provider: 'openai', model: 'cut-slow' }] },
      },
      circuitBreaker: { failureThreshold: 2, windowMs: 60_000, cooldownMs: COOLDOWN_MS },
    },
  });
});

after(async () => {
  await tg?.close();
  await upstream?.close();
});

interface Sent {
  status: number;
  text: string;
  requestId: string;
}

async function send(path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(`${tg.gateway.origin}/api${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${tg.apiKey}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

async function sendWhole(path: string, body: unknown): Promise<Sent> {
  const res = await send(path, body);
  return { status: res.status, text: await res.text(), requestId: res.headers.get('x-request-id')! };
}

/** One client dialect: the path and body of a request for `model`. */
interface ClientDialect {
  name: string;
  request(model: string, stream: boolean): { path: string; body: unknown };
  /** The provider that speaks this dialect natively (its answer is passed through) and one that is translated. */
  native: string;
  translated: string;
}

const DIALECTS: ClientDialect[] = [
  {
    // OpenAI is the canonical format: a Chat Completions request to it is relayed chunk by chunk as it came.
    name: 'openai-chat', native: 'openai', translated: 'anthropic',
    request: (model, stream) => ({ path: '/v1/chat/completions', body: { model, messages: [{ role: 'user', content: PROMPT }], stream } }),
  },
  {
    name: 'anthropic-messages', native: 'anthropic', translated: 'openai',
    request: (model, stream) => ({ path: '/v1/messages', body: { model, max_tokens: 200, messages: [{ role: 'user', content: PROMPT }], stream } }),
  },
  {
    name: 'openai-responses', native: 'openai', translated: 'anthropic',
    request: (model, stream) => ({ path: '/v1/responses', body: { model, input: PROMPT, stream } }),
  },
  {
    name: 'gemini', native: 'gemini', translated: 'openai',
    request: (model, stream) => ({
      path: `/v1beta/models/${model}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
      body: { contents: [{ role: 'user', parts: [{ text: PROMPT }] }] },
    }),
  },
];

interface Account {
  budget: { spent_usd: number; reserved_usd: number };
}

/** The user's spend this period in nano-USD, once nothing is reserved any more (every request settled). */
async function spentNanos(): Promise<number> {
  let spent = 0;
  await eventually(async () => {
    const res = await fetch(`${tg.gateway.origin}/api/account`, { headers: { authorization: `Bearer ${tg.apiKey}` } });
    const account = (await res.json()) as Account;
    assert.equal(account.budget.reserved_usd, 0, 'every reservation settled');
    spent = Math.round(account.budget.spent_usd * 1e9);
  });
  return spent;
}

/** Asserts the row of a cut answer: billed (tokens, estimated, priced) with `errorCode`; returns its cost in nano-USD. */
async function assertBilledCut(requestId: string, errorCode: string, generated: boolean): Promise<number> {
  const row = await tg.logRow(requestId);
  assert.equal(row.error_code, errorCode);
  assert.ok((row.prompt_tokens ?? 0) > 0, `prompt tokens ${row.prompt_tokens}`);
  if (generated) assert.ok((row.completion_tokens ?? 0) > 0, `completion tokens ${row.completion_tokens}`);
  assert.equal(row.usage_estimated, 1);
  assert.ok((row.cost_nanos ?? 0) > 0, `cost ${row.cost_nanos}`);
  return row.cost_nanos!;
}

/** The stream's text ends with the dialect's error event for a cut answer (each dialect words it in its own shape). */
function assertEndsWithCutError(text: string): void {
  const events = text.trim().split(/\r?\n\r?\n/);
  const tail = events.slice(-2).join('\n');
  assert.match(tail, /ended the (answer|stream) before (it|the answer) was complete|in the middle of an event/, `no error event at the end of:\n${text.slice(-600)}`);
  assert.doesNotMatch(text, /\[DONE\]|message_stop|response\.completed/, 'the cut stream does not end as if whole');
}

describe('a stream the upstream cuts is billed and recorded as truncated', () => {
  for (const dialect of DIALECTS) {
    for (const via of ['native', 'translated'] as const) {
      const provider = dialect[via];
      test(`${dialect.name} → ${provider} (${via}), stream reset mid-way`, async () => {
        const before = await spentNanos();
        const { path, body } = dialect.request(`${provider}/cut-reset`, true);
        const sent = await sendWhole(path, body);
        assert.equal(sent.status, 200);
        assertEndsWithCutError(sent.text);
        const costNanos = await assertBilledCut(sent.requestId, 'upstream_stream_truncated', true);
        assert.equal((await tg.logRow(sent.requestId)).status, 502);
        assert.equal(await spentNanos(), before + costNanos, 'the user\'s spend includes the cut answer');
      });

      test(`${dialect.name} → ${provider} (${via}), JSON body cut mid-way: the prompt is billed`, async () => {
        const before = await spentNanos();
        const { path, body } = dialect.request(`${provider}/cut-reset`, false);
        const sent = await sendWhole(path, body);
        assert.equal(sent.status, 502);
        const costNanos = await assertBilledCut(sent.requestId, 'upstream_stream_truncated', false);
        assert.equal(await spentNanos(), before + costNanos);
      });
    }
  }

  for (const dialect of [DIALECTS[1]!, DIALECTS[3]!]) {
    for (const via of ['native', 'translated'] as const) {
      const provider = dialect[via];
      for (const model of ['cut-close', 'cut-tail']) {
        test(`${dialect.name} → ${provider} (${via}), ${model === 'cut-close' ? 'closed without its terminal event' : 'closed in the middle of an event'}`, async () => {
          const { path, body } = dialect.request(`${provider}/${model}`, true);
          const sent = await sendWhole(path, body);
          assertEndsWithCutError(sent.text);
          await assertBilledCut(sent.requestId, 'upstream_stream_truncated', true);
        });
      }
    }
  }
});

describe('a stream the upstream stops sending is billed and recorded as a timeout', () => {
  for (const dialect of [DIALECTS[0]!, DIALECTS[2]!]) {
    for (const via of ['native', 'translated'] as const) {
      const provider = dialect[via];
      test(`${dialect.name} → ${provider} (${via}), silent past upstream.bodyTimeoutMs`, async () => {
        const before = await spentNanos();
        const { path, body } = dialect.request(`${provider}/cut-stall`, true);
        const sent = await sendWhole(path, body);
        assert.equal(sent.status, 200);
        assert.match(sent.text.trim().split(/\n\n/).slice(-2).join('\n'), /timed out \(body\)/);
        const costNanos = await assertBilledCut(sent.requestId, 'upstream_timeout', true);
        assert.equal((await tg.logRow(sent.requestId)).status, 504);
        assert.equal(await spentNanos(), before + costNanos);
      });
    }
  }
});

describe('the circuit breaker counts cut streams', () => {
  /** The breaker state of a deployment named by the manifest, from `/readyz`. */
  async function breaker(deployment: string): Promise<string> {
    const body = (await (await fetch(`${tg.gateway.origin}/readyz`)).json()) as { upstreams: { deployments: Record<string, string> } };
    return body.upstreams.deployments[deployment]!;
  }
  const cutStream = () => sendWhole('/v1/chat/completions', { model: 'flaky', messages: [{ role: 'user', content: PROMPT }], stream: true });

  test('opens after failureThreshold cut streams, and a cut half-open probe opens it again', async () => {
    assert.equal(await breaker('openai/cut-breaker'), 'closed');
    const first = await cutStream();
    await assertBilledCut(first.requestId, 'upstream_stream_truncated', true);
    assert.equal(await breaker('openai/cut-breaker'), 'closed', 'one cut is below the threshold');
    const second = await cutStream();
    await assertBilledCut(second.requestId, 'upstream_stream_truncated', true);
    await eventually(async () => assert.equal(await breaker('openai/cut-breaker'), 'open'));

    clock.advance(COOLDOWN_MS + 1);
    assert.equal(await breaker('openai/cut-breaker'), 'half-open');
    const probe = await cutStream();
    assertEndsWithCutError(probe.text);
    await assertBilledCut(probe.requestId, 'upstream_stream_truncated', true);
    await eventually(async () => assert.equal(await breaker('openai/cut-breaker'), 'open', 'the cut probe opened the breaker again'));
  });

  /** Streams from the `patient` group until 5 words came, then leaves; returns the request id. */
  async function leaveMidStream(): Promise<string> {
    const controller = new AbortController();
    const res = await send('/v1/chat/completions', { model: 'patient', messages: [{ role: 'user', content: PROMPT }], stream: true }, controller.signal);
    const requestId = res.headers.get('x-request-id')!;
    const decoder = new TextDecoder();
    let text = '';
    const reader = res.body!.getReader();
    while ((text.match(/word\d+/g) ?? []).length < 5) {
      const { value, done } = await reader.read();
      assert.ok(!done, 'the stream ended before the client left');
      text += decoder.decode(value, { stream: true });
    }
    controller.abort();
    await reader.cancel().catch(() => {});
    return requestId;
  }

  test('a client that leaves mid-stream is billed for what was streamed, and the upstream is not blamed', async () => {
    // As many exits as failureThreshold: were they counted, the breaker would open.
    for (let i = 0; i < 2; i++) {
      const before = await spentNanos();
      const row = await tg.logRow(await leaveMidStream());
      assert.equal(row.error_code, 'client_disconnected');
      assert.equal(row.status, 499);
      assert.ok((row.completion_tokens ?? 0) >= 5, `completion tokens ${row.completion_tokens}`);
      assert.equal(row.usage_estimated, 1);
      assert.ok((row.cost_nanos ?? 0) > 0);
      assert.equal(await spentNanos(), before + row.cost_nanos!);
      const attempts = JSON.parse(row.attempts ?? '[]') as Array<{ errorCode: string | null }>;
      assert.equal(attempts.length, 1);
      assert.equal(attempts[0]!.errorCode, null, 'the attempt is not recorded as the upstream\'s failure');
    }
    assert.equal(await breaker('openai/cut-slow'), 'closed');
  });
});
