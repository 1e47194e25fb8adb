/**
 * The guardrails plugin in the real `tollgate serve` process, behind the default chain, with the OpenAI
 * simulator upstream (`sim-echo` answers the last user message, streamed in two halves, so a test
 * chooses the answer and where the stream cuts it), the official SDKs as clients, and a real local
 * HTTP server as the external check. Each user meets different rules:
 * - alice: input redacted (every detector and a pattern of the operator's);
 * - bob: input blocked;
 * - carol: output redacted;
 * - dave (matched by his key's id): output blocked;
 * - erin: external checks, one per model (a verdict, a timeout failing open, a timeout failing closed).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import { simEchoPieces, startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startGatewayProcess, type GatewayProcess } from '../helpers/gateway-process.ts';
import { cliJson, runCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';
import { waitForLogRow } from '../helpers/log-rows.ts';
import { defaultManifest } from '../../core/default-manifest.ts';

const DETECTORS = ['email', 'phone', 'payment-card', 'iban', 'secret'] as const;
type DetectorId = typeof DETECTORS[number];

/** One sample each detector finds (the engine's own tests cover the formats in depth). */
const SAMPLES: Record<DetectorId, string> = {
  email: 'jane.doe@example.com',
  phone: '+44 20 7946 0958',
  'payment-card': '4111 1111 1111 1111',
  iban: 'GB82 WEST 1234 5698 7654 32',
  secret: 'sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD',
};

const say = (id: DetectorId) => `Note: ${SAMPLES[id]} end.`;
const redacted = (id: string) => `Note: [REDACTED:${id}] end.`;

interface CheckServer {
  url: string;
  received: Array<{ texts: string[]; direction: string }>;
  close(): Promise<void>;
}

/** The external check: `/verdict` blocks texts that say "forbidden"; `/hang` never answers. */
async function startCheckServer(): Promise<CheckServer> {
  const received: CheckServer['received'] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    let raw = '';
    req.on('data', (d: Buffer) => (raw += d.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw) as { texts: string[]; direction: string };
      received.push(body);
      if (req.url === '/hang') return;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body.texts.some((t) => t.includes('forbidden')) ? { block: true, reason: 'says forbidden' } : { block: false }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

function guardrailRules(daveKeyId: number, checkUrl: string) {
  return [
    { name: 'in-block', detectors: [...DETECTORS], applyTo: 'input', action: 'block', match: { users: ['bob'] } },
    {
      name: 'in-redact', detectors: [...DETECTORS], patterns: [{ pattern: 'EMP-[0-9]{6}', id: 'employee-id' }],
      applyTo: 'input', action: 'redact', match: { users: ['alice'] },
    },
    { name: 'out-redact', detectors: [...DETECTORS], applyTo: 'output', action: 'redact', match: { users: ['carol'] } },
    { name: 'out-block', detectors: [...DETECTORS], applyTo: 'output', action: 'block', match: { keys: [daveKeyId] } },
    { name: 'ext-verdict', external: { url: `${checkUrl}/verdict` }, applyTo: 'input', action: 'block', match: { users: ['erin'], models: ['openai/gpt-4o'] } },
    { name: 'ext-open', external: { url: `${checkUrl}/hang`, timeoutMs: 200, failMode: 'open' }, applyTo: 'input', action: 'block', match: { users: ['erin'], models: ['*/sim-e?ho'] } },
    { name: 'ext-closed', external: { url: `${checkUrl}/hang`, timeoutMs: 200, failMode: 'closed' }, applyTo: 'input', action: 'block', match: { users: ['erin'], models: ['openai/gpt-4o-*'] } },
  ];
}

type Entry = { name: string; config?: Record<string, unknown> };

/** The default manifest with guardrails before the router, and a quick log flush. */
function manifestWith(rules: unknown): unknown {
  const manifest = structuredClone(defaultManifest) as { plugins: Entry[] };
  manifest.plugins.find((p) => p.name === 'logger')!.config = { flushIntervalMs: 20 };
  manifest.plugins.splice(manifest.plugins.length - 1, 0, { name: 'guardrails', config: { rules } });
  return manifest;
}

let dataDir: string;
let sim: OpenAISimulator;
let check: CheckServer;
let gateway: GatewayProcess;
const keys: Record<string, string> = {};
const openai: Record<string, OpenAI> = {};
const anthropic: Record<string, Anthropic> = {};

before(async () => {
  dataDir = tempDir('tollgate-guardrails-');
  [sim, check] = await Promise.all([startOpenAISimulator(), startCheckServer()]);
  let daveKeyId = 0;
  for (const name of ['alice', 'bob', 'carol', 'dave', 'erin']) {
    await cliJson(['users', 'create', '--name', name], { dataDir });
    const created = await cliJson<{ id: number; key: string }>(['keys', 'create', '--user', name], { dataDir });
    keys[name] = created.key;
    if (name === 'dave') daveKeyId = created.id;
  }
  gateway = await startGatewayProcess({
    dataDir, manifest: manifestWith(guardrailRules(daveKeyId, check.url)),
    env: { OPENAI_BASE_URL: sim.baseUrl, OPENAI_API_KEY: 'sk-upstream-secret' },
  });
  for (const [name, key] of Object.entries(keys)) {
    openai[name] = new OpenAI({ apiKey: key, baseURL: gateway.baseURL, maxRetries: 0 });
    anthropic[name] = new Anthropic({ apiKey: key, baseURL: `${gateway.origin}/api`, maxRetries: 0 });
  }
});

after(async () => {
  await gateway?.stop();
  await Promise.all([sim?.close(), check?.close()]);
});

const ECHO = 'openai/sim-echo';

async function chatText(user: string, text: string, stream: boolean, model = ECHO): Promise<string> {
  const messages = [{ role: 'user' as const, content: text }];
  if (!stream) return (await openai[user]!.chat.completions.create({ model, messages })).choices[0]!.message.content ?? '';
  let out = '';
  for await (const chunk of await openai[user]!.chat.completions.create({ model, messages, stream: true })) out += chunk.choices[0]?.delta.content ?? '';
  return out;
}

async function messagesText(user: string, text: string, stream: boolean): Promise<string> {
  const params = { model: ECHO, max_tokens: 100, messages: [{ role: 'user' as const, content: text }] };
  if (!stream) {
    const message = await anthropic[user]!.messages.create(params);
    return message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
  }
  let out = '';
  for await (const event of await anthropic[user]!.messages.create({ ...params, stream: true })) {
    if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') out += event.delta.text;
  }
  return out;
}

/** The last chat request the upstream received: its messages' contents and its raw body. */
function lastUpstream(): { contents: unknown[]; raw: string } {
  const sent = sim.requests.filter((r) => r.path.endsWith('/chat/completions')).at(-1)!;
  return { contents: (sent.body!.messages as Array<{ content: unknown }>).map((m) => m.content), raw: sent.rawBody };
}

/** Expects `run` to fail with an OpenAI API error and returns it. */
async function openaiError(run: () => Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  try {
    await run();
  } catch (err) {
    if (err instanceof OpenAI.APIError) return err;
    throw err;
  }
  assert.fail('expected an API error');
}

async function anthropicCall(user: string, text: string): Promise<Response> {
  return fetch(`${gateway.origin}/api/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': keys[user]!, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: ECHO, max_tokens: 100, messages: [{ role: 'user', content: text }] }),
  });
}

/** The log row of `requestId`, once the background logger wrote it. */
const logRow = (requestId: string) => waitForLogRow(dataDir, requestId);

const metricsText = async () => (await fetch(`${gateway.origin}/metrics`)).text();

/** Asserts an OpenAI-shaped `content_blocked` naming `rule`, without the sample. */
function assertBlocked(err: InstanceType<typeof OpenAI.APIError>, rule: string, sample: string): void {
  assert.equal(err.status, 400);
  const body = err.error as { code: string; message: string; type: string; param: string | null };
  assert.equal(body.code, 'content_blocked');
  assert.equal(body.message, `Blocked by guardrail rule "${rule}".`);
  assert.doesNotMatch(JSON.stringify(body), new RegExp(sample.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
}

describe('input rules', () => {
  test('redact: every detector\'s match reaches the upstream as [REDACTED:<detector>], OpenAI chat streamed or not and Anthropic messages', async () => {
    for (const id of DETECTORS) {
      for (const stream of [false, true]) {
        assert.equal(await chatText('alice', say(id), stream), redacted(id), `${id}, OpenAI chat, stream ${stream}`);
        assert.deepEqual(lastUpstream().contents, [redacted(id)]);
        assert.equal(lastUpstream().raw.includes(SAMPLES[id]), false);
        assert.equal(await messagesText('alice', say(id), stream), redacted(id), `${id}, Anthropic messages, stream ${stream}`);
        assert.equal(lastUpstream().raw.includes(SAMPLES[id]), false);
        assert.match(lastUpstream().raw, new RegExp(`\\[REDACTED:${id}\\]`));
      }
    }
  });

  test('redact: an operator pattern, in every message of every role, logged by rule and count', async () => {
    const { data, response } = await openai.alice!.chat.completions.create({
      model: ECHO,
      messages: [
        { role: 'system', content: 'The agent is EMP-123456.' },
        { role: 'user', content: [{ type: 'text', text: 'I am EMP-654321, mail jane.doe@example.com' }] },
      ],
    }).withResponse();
    assert.equal(data.choices[0]!.message.content, 'I am [REDACTED:employee-id], mail [REDACTED:email]');
    assert.deepEqual(lastUpstream().contents, ['The agent is [REDACTED:employee-id].', [{ type: 'text', text: 'I am [REDACTED:employee-id], mail [REDACTED:email]' }]]);
    const row = await logRow(response.headers.get('x-request-id')!);
    assert.deepEqual(JSON.parse(row.plugin_fields as string), { 'guardrails.in-redact': 3 });
    assert.match(await metricsText(), /tollgate_plugin_guardrails_hits_total\{rule="in-redact",direction="input",action="redact"\} \d+/);
  });

  test('block: every detector refuses the request with 400 content_blocked naming the rule, in OpenAI\'s and Anthropic\'s shapes; the upstream is not called', async () => {
    for (const id of DETECTORS) {
      const calls = sim.requests.length;
      assertBlocked(await openaiError(() => chatText('bob', say(id), false)), 'in-block', SAMPLES[id]);
      assertBlocked(await openaiError(() => chatText('bob', say(id), true)), 'in-block', SAMPLES[id]);
      const res = await anthropicCall('bob', say(id));
      assert.equal(res.status, 400);
      const body = await res.json() as { type: string; error: { type: string; message: string } };
      assert.deepEqual(body, { type: 'error', error: { type: 'invalid_request_error', message: 'Blocked by guardrail rule "in-block".' } });
      assert.equal(sim.requests.length, calls, `${id}: nothing went upstream`);
    }
    assert.equal(await chatText('bob', 'Nothing to see here.', false), 'Nothing to see here.', 'a clean request is served');
  });

  test('block: the log row names the rule and counts, the metric counts, neither holds the text', async () => {
    const err = await openaiError(() => chatText('bob', `mail ${SAMPLES.email} or ${SAMPLES.phone}`, false));
    assert.equal((err.error as { param: string }).param, 'messages');
    const row = await logRow(err.requestID!);
    assert.equal(row.status, 400);
    assert.equal(row.error_code, 'content_blocked');
    assert.deepEqual(JSON.parse(row.plugin_fields as string), { 'guardrails.in-block': 2 });
    const metrics = await metricsText();
    assert.match(metrics, /tollgate_plugin_guardrails_hits_total\{rule="in-block",direction="input",action="block"\} \d+/);
    assert.equal(metrics.includes(SAMPLES.email), false);
  });
});

describe('output rules', () => {
  test('redact: every detector\'s match in the answer becomes [REDACTED:<detector>], streamed or not, native and translated', async () => {
    for (const id of DETECTORS) {
      for (const stream of [false, true]) {
        assert.equal(await chatText('carol', say(id), stream), redacted(id), `${id}, OpenAI chat, stream ${stream}`);
        assert.deepEqual(lastUpstream().contents, [say(id)], 'output rules leave the request alone');
        assert.equal(await messagesText('carol', say(id), stream), redacted(id), `${id}, Anthropic messages, stream ${stream}`);
      }
    }
  });

  test('a secret split across two stream chunks never reaches the client, nor its halves', async () => {
    const secret = SAMPLES.secret;
    const [first, second] = simEchoPieces(secret);
    assert.ok(first.length > 10 && second.length > 10, 'the simulator cuts the secret in the middle');
    for (const dialect of ['openai', 'anthropic']) {
      const text = dialect === 'openai' ? await chatText('carol', secret, true) : await messagesText('carol', secret, true);
      assert.equal(text, '[REDACTED:secret]', dialect);
      assert.equal(text.includes(first) || text.includes(second) || text.includes('sk-'), false, dialect);
    }
  });

  test('block: an answer with a match is refused with content_blocked naming the rule, and none of it reaches the client', async () => {
    for (const id of DETECTORS) {
      assertBlocked(await openaiError(() => chatText('dave', say(id), false)), 'out-block', SAMPLES[id]);
      const res = await anthropicCall('dave', say(id));
      assert.equal(res.status, 400);
      assert.deepEqual(await res.json(), { type: 'error', error: { type: 'invalid_request_error', message: 'Blocked by guardrail rule "out-block".' } });
      // Streamed: the text is held until the rule decides, so the stream ends with the error and no piece of it.
      let streamed = '';
      const failure = await openaiError(async () => {
        for await (const chunk of await openai.dave!.chat.completions.create({ model: ECHO, messages: [{ role: 'user', content: say(id) }], stream: true })) {
          streamed += chunk.choices[0]?.delta.content ?? '';
        }
      });
      assert.match(failure.message, /Blocked by guardrail rule "out-block"/);
      assert.equal(failure.status, undefined, 'the stream had started: the error is its error event');
      assert.equal((failure.error as { code: string }).code, 'content_blocked');
      assert.ok('Note: '.startsWith(streamed), `${id}: at most the text before the match was sent, got ${JSON.stringify(streamed)}`);
    }
    assert.equal(await chatText('dave', 'All clear.', true), 'All clear.');
  });

  test('hits in the log row and /metrics: count only', async () => {
    const { response } = await openai.carol!.chat.completions.create({ model: ECHO, messages: [{ role: 'user', content: `${SAMPLES.iban} and ${SAMPLES.iban}` }] }).withResponse();
    const row = await logRow(response.headers.get('x-request-id')!);
    assert.deepEqual(JSON.parse(row.plugin_fields as string), { 'guardrails.out-redact': 2 });
    assert.match(await metricsText(), /tollgate_plugin_guardrails_hits_total\{rule="out-redact",direction="output",action="redact"\} \d+/);
  });
});

describe('the external check', () => {
  test('blocks what it refuses and serves what it passes, receiving the request\'s texts', async () => {
    const err = await openaiError(() => chatText('erin', 'this is forbidden', false, 'openai/gpt-4o'));
    assertBlocked(err, 'ext-verdict', 'forbidden');
    assert.deepEqual(check.received.at(-1), { texts: ['this is forbidden'], direction: 'input' });
    const served = await openai.erin!.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'this is fine' }] });
    assert.equal(served.choices.length, 1);
    assert.deepEqual(check.received.at(-1), { texts: ['this is fine'], direction: 'input' });
    const metrics = await metricsText();
    assert.match(metrics, /tollgate_plugin_guardrails_external_checks_total\{rule="ext-verdict",outcome="blocked"\} 1/);
    assert.match(metrics, /tollgate_plugin_guardrails_external_checks_total\{rule="ext-verdict",outcome="passed"\} 1/);
  });

  test('a check that never answers: fail-open serves the request', async () => {
    const { data, response } = await openai.erin!.chat.completions.create({ model: ECHO, messages: [{ role: 'user', content: 'served anyway' }] }).withResponse();
    assert.equal(data.choices[0]!.message.content, 'served anyway');
    const row = await logRow(response.headers.get('x-request-id')!);
    assert.deepEqual(JSON.parse(row.plugin_fields as string), { 'guardrails.ext-open.check': 'timeout' });
    assert.match(await metricsText(), /tollgate_plugin_guardrails_external_checks_total\{rule="ext-open",outcome="timeout"\} 1/);
  });

  test('a check that never answers: fail-closed blocks the request', async () => {
    const calls = sim.requests.length;
    const err = await openaiError(() => chatText('erin', 'blocked anyway', false, 'openai/gpt-4o-mini'));
    assert.equal(err.status, 400);
    assert.equal((err.error as { code: string }).code, 'content_blocked');
    assert.match((err.error as { message: string }).message, /^Blocked by guardrail rule "ext-closed"/);
    assert.equal(sim.requests.length, calls);
    assert.match(await metricsText(), /tollgate_plugin_guardrails_external_checks_total\{rule="ext-closed",outcome="timeout"\} 1/);
  });
});

describe('the config', () => {
  test('tollgate check reports a bad pattern and a misplaced external check at their JSON pointers', async () => {
    const dir = tempDir('tollgate-guardrails-config-');
    const rules = [
      { name: 'ok', detectors: ['email'], applyTo: 'both', action: 'redact' },
      { name: 'ext', external: { url: 'http://127.0.0.1:9/check' }, applyTo: 'output', action: 'block' },
      { name: 'bad', patterns: [{ pattern: 'EMP-[0-9' }], applyTo: 'input', action: 'block' },
    ];
    const path = join(dir, 'tollgate.json');
    writeFileSync(path, JSON.stringify(manifestWith(rules)));
    const result = await runCli(['check', '--config', path]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /\/plugins\/8\/config\/rules\/2\/patterns\/0\/pattern: pattern \/EMP-\[0-9\/ is not a valid regular expression/);
    assert.match(result.stderr, /\/plugins\/8\/config\/rules\/1\/applyTo: an external check applies to input only/);
    assert.doesNotMatch(result.stderr, /rules\/0/);
  });
});
