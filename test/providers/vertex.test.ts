/**
 * The Google Vertex AI provider through the real in-process gateway: the official `@anthropic-ai/sdk`
 * (Claude Code's path, `/api/v1/messages`) and `openai` clients against Tollgate, the Vertex simulator
 * upstream issuing OAuth tokens for service-account keys made here (the JWT assertion's signature
 * checked) and refusing model calls without one of its tokens.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import type { TestGateway } from '../helpers/test-gateway.ts';
import { collect, startProviderGateway, thrown } from '../helpers/provider-gateway.ts';
import { tempDir } from '../helpers/tmp.ts';
import {
  startVertexSimulator, VERTEX_CLAUDE_USAGE, VERTEX_GEMINI_USAGE, VERTEX_SIM_LOCATION, VERTEX_SIM_PIECES, VERTEX_SIM_PROJECT, VERTEX_SIM_REPLY,
  type VertexSimulator,
} from '../helpers/vertex-simulator.ts';
import type { RecordedRequest } from '../helpers/sim-http.ts';

const CLAUDE = 'claude-sonnet-4-5@20250929';
const GEMINI = 'gemini-2.5-flash';
const MODELS_PATH = `/v1/projects/${VERTEX_SIM_PROJECT}/locations/${VERTEX_SIM_LOCATION}/publishers`;
const SA = { main: 'gateway@sim-project.iam.gserviceaccount.com', reuse: 'reuse@sim-project.iam.gserviceaccount.com', file: 'short-lived@sim-project.iam.gserviceaccount.com', parallel: 'parallel@sim-project.iam.gserviceaccount.com' };

let sim: VertexSimulator;
let tg: TestGateway;
let client: OpenAI;
let anthropic: Anthropic;

const callsSince = (from: number): RecordedRequest[] => sim.requests.slice(from);
const promptOf = (u: typeof VERTEX_CLAUDE_USAGE) => u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;
const hello = [{ role: 'user' as const, content: 'Say hello' }];

before(async () => {
  sim = await startVertexSimulator();
  const keyFile = join(tempDir('tollgate-vertex-'), 'short-lived.json');
  // Tokens of 60 s are always within google-auth-library's five-minute refresh window: each call gets a new one.
  writeFileSync(keyFile, sim.serviceAccountKey(SA.file, { expiresInSec: 60 }));
  const endpoint = { baseUrl: sim.endpoint, project: VERTEX_SIM_PROJECT, location: VERTEX_SIM_LOCATION };
  ({ tg, client, anthropic } = await startProviderGateway({
    vertex: { type: 'vertex', ...endpoint, credentialsJson: sim.serviceAccountKey(SA.main), models: [CLAUDE, GEMINI] },
    vertexreuse: { type: 'vertex', ...endpoint, credentialsJson: sim.serviceAccountKey(SA.reuse) },
    vertexparallel: { type: 'vertex', ...endpoint, credentialsJson: sim.serviceAccountKey(SA.parallel) },
    vertexfile: { type: 'vertex', ...endpoint, credentialsFile: keyFile },
    vertexbad: { type: 'vertex', ...endpoint, credentialsJson: sim.serviceAccountKey('unknown@sim-project.iam.gserviceaccount.com', { registered: false }) },
  }));
});

after(async () => {
  await tg?.close();
  await sim?.close();
});

describe('Claude on Vertex AI through /api/v1/messages (Claude Code\'s path)', () => {
  test('a message goes as the client\'s body without model, with anthropic_version, to :rawPredict with a bearer token', async () => {
    const from = sim.requests.length;
    const params = {
      model: `vertex/${CLAUDE}`, max_tokens: 300, system: [{ type: 'text' as const, text: 'Be brief.', cache_control: { type: 'ephemeral' as const } }],
      messages: hello, metadata: { user_id: 'u-1' },
    };
    const { data, response } = await anthropic.messages.create(params, { headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14' } }).withResponse();
    assert.equal(data.content[0]!.type === 'text' && data.content[0].text, VERTEX_SIM_REPLY);
    assert.equal(data.id, 'msg_vrtx_01SIM');
    const [sent] = callsSince(from);
    assert.equal(sent!.path, `${MODELS_PATH}/anthropic/models/${CLAUDE}:rawPredict`);
    const { model: _model, ...expected } = params;
    assert.deepEqual(sent!.body, { ...expected, anthropic_version: 'vertex-2023-10-16' });
    assert.match(String(sent!.headers.authorization), /^Bearer ya29\.sim-\d+$/);
    assert.equal(sent!.headers['anthropic-beta'], 'interleaved-thinking-2025-05-14');
    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.deepEqual([row.provider, row.prompt_tokens, row.completion_tokens, row.cached_tokens, row.cache_write_tokens],
      ['vertex', promptOf(VERTEX_CLAUDE_USAGE), VERTEX_CLAUDE_USAGE.output_tokens, VERTEX_CLAUDE_USAGE.cache_read_input_tokens, VERTEX_CLAUDE_USAGE.cache_creation_input_tokens]);
    assert.equal(row.unpriced, 0);
    // Sonnet 4.5 at the dataset's Vertex (`google`) rates: $3 in, $15 out, $0.30 cache read, $3.75 cache write per million.
    assert.equal(row.cost_nanos, 12 * 3000 + 7 * 15000 + 100 * 300 + 20 * 3750);
  });

  test('a stream goes to :streamRawPredict with stream: true and comes back as Anthropic\'s SSE, billed from its usage', async () => {
    const from = sim.requests.length;
    const stream = anthropic.messages.stream({ model: `vertex/${CLAUDE}`, max_tokens: 300, messages: hello });
    const events = await collect(stream);
    const final = await stream.finalMessage();
    assert.deepEqual(events.map((e) => e.type).filter((t, i, all) => all.indexOf(t) === i),
      ['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    assert.equal(final.content[0]!.type === 'text' && final.content[0]!.text, VERTEX_SIM_REPLY);
    const [sent] = callsSince(from);
    assert.equal(sent!.path, `${MODELS_PATH}/anthropic/models/${CLAUDE}:streamRawPredict`);
    assert.deepEqual(sent!.body, { max_tokens: 300, messages: hello, stream: true, anthropic_version: 'vertex-2023-10-16' });
    const row = await tg.logRow((await stream.withResponse()).response.headers.get('x-request-id')!);
    assert.deepEqual([row.prompt_tokens, row.completion_tokens, row.cached_tokens], [promptOf(VERTEX_CLAUDE_USAGE), VERTEX_CLAUDE_USAGE.output_tokens, VERTEX_CLAUDE_USAGE.cache_read_input_tokens]);
    assert.ok(row.cost_nanos! > 0, `cost ${row.cost_nanos}`);
  });

  test('a RESOURCE_EXHAUSTED reaches a Messages client as Anthropic\'s 429 rate_limit_error, not Google\'s body', async () => {
    const err = await thrown(() => anthropic.messages.create({ model: 'vertex/claude-sim-throttle', max_tokens: 10, messages: hello }));
    assert.ok(err instanceof Anthropic.APIError, String(err));
    assert.equal(err.status, 429);
    assert.equal((err.error as { type?: string; error?: { type?: string } }).error?.type, 'rate_limit_error');
  });
});

describe('OpenAI chat to Vertex AI', () => {
  test('to Claude: translated through Anthropic\'s mapping, :rawPredict with anthropic_version, usage with the cache', async () => {
    const from = sim.requests.length;
    const data = await client.chat.completions.create({ model: `vertex/${CLAUDE}`, messages: [{ role: 'system', content: 'Be brief.' }, ...hello], max_tokens: 50 });
    assert.equal(data.choices[0]!.message.content, VERTEX_SIM_REPLY);
    assert.equal(data.usage!.prompt_tokens, promptOf(VERTEX_CLAUDE_USAGE));
    assert.equal(data.usage!.prompt_tokens_details!.cached_tokens, VERTEX_CLAUDE_USAGE.cache_read_input_tokens);
    const [sent] = callsSince(from);
    assert.equal(sent!.path, `${MODELS_PATH}/anthropic/models/${CLAUDE}:rawPredict`);
    assert.equal(sent!.body!.anthropic_version, 'vertex-2023-10-16');
    assert.equal(sent!.body!.model, undefined);
    assert.equal(sent!.body!.max_tokens, 50);
    assert.deepEqual(sent!.body!.system, [{ type: 'text', text: 'Be brief.' }]);
  });

  test('to Claude, streamed: :streamRawPredict, the text in order, the finish reason and the usage chunk', async () => {
    const from = sim.requests.length;
    const chunks = await collect(await client.chat.completions.create({ model: `vertex/${CLAUDE}`, messages: hello, stream: true, stream_options: { include_usage: true } }));
    assert.deepEqual(chunks.map((c) => c.choices[0]?.delta.content ?? '').filter(Boolean), VERTEX_SIM_PIECES);
    assert.equal(chunks.find((c) => c.choices[0]?.finish_reason)!.choices[0]!.finish_reason, 'stop');
    assert.equal(chunks.at(-1)!.usage!.completion_tokens, VERTEX_CLAUDE_USAGE.output_tokens);
    assert.equal(callsSince(from)[0]!.path, `${MODELS_PATH}/anthropic/models/${CLAUDE}:streamRawPredict`);
  });

  test('to Gemini: translated by the Gemini codec to :generateContent, the answer, usage and cost back', async () => {
    const from = sim.requests.length;
    const { data, response } = await client.chat.completions.create({
      model: `vertex/${GEMINI}`, messages: [{ role: 'system', content: 'Be brief.' }, ...hello], max_tokens: 64, temperature: 0.5,
    }).withResponse();
    assert.equal(data.choices[0]!.message.content, VERTEX_SIM_REPLY);
    assert.equal(data.choices[0]!.finish_reason, 'stop');
    const [sent] = callsSince(from);
    assert.equal(sent!.path, `${MODELS_PATH}/google/models/${GEMINI}:generateContent`);
    assert.deepEqual(sent!.body!.contents, [{ role: 'user', parts: [{ text: 'Say hello' }] }]);
    assert.deepEqual(sent!.body!.systemInstruction, { parts: [{ text: 'Be brief.' }] });
    assert.deepEqual(sent!.body!.generationConfig, { maxOutputTokens: 64, temperature: 0.5 });
    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.deepEqual([row.provider, row.prompt_tokens, row.completion_tokens], ['vertex', VERTEX_GEMINI_USAGE.promptTokenCount, VERTEX_GEMINI_USAGE.candidatesTokenCount]);
    // Gemini 2.5 Flash at the dataset's rates: $0.30 in, $2.50 out per million.
    assert.equal(row.cost_nanos, 9 * 300 + 5 * 2500);
  });

  test('to Gemini, streamed: :streamGenerateContent?alt=sse, the text in order and the usage', async () => {
    const from = sim.requests.length;
    const chunks = await collect(await client.chat.completions.create({ model: `vertex/${GEMINI}`, messages: hello, stream: true, stream_options: { include_usage: true } }));
    assert.deepEqual(chunks.map((c) => c.choices[0]?.delta.content ?? '').filter(Boolean), VERTEX_SIM_PIECES);
    assert.deepEqual([chunks.at(-1)!.usage!.prompt_tokens, chunks.at(-1)!.usage!.completion_tokens], [VERTEX_GEMINI_USAGE.promptTokenCount, VERTEX_GEMINI_USAGE.candidatesTokenCount]);
    const [sent] = callsSince(from);
    assert.equal(sent!.path, `${MODELS_PATH}/google/models/${GEMINI}:streamGenerateContent`);
    assert.equal(sent!.query.alt, 'sse');
  });
});

describe('Google access tokens', () => {
  test('a service account\'s token is fetched once and reused by the following calls', async () => {
    const from = sim.requests.length;
    for (let i = 0; i < 3; i++) await client.chat.completions.create({ model: `vertexreuse/${GEMINI}`, messages: hello });
    assert.equal(sim.tokenRequests.get(SA.reuse), 1);
    const bearers = new Set(callsSince(from).map((r) => r.headers.authorization));
    assert.equal(bearers.size, 1, [...bearers].join(', '));
  });

  test('calls that arrive together before any token share one token request', async () => {
    await Promise.all([0, 1, 2].map(() => client.chat.completions.create({ model: `vertexparallel/${GEMINI}`, messages: hello })));
    assert.equal(sim.tokenRequests.get(SA.parallel), 1);
  });

  test('a key file\'s token about to expire is fetched again for the next call', async () => {
    const from = sim.requests.length;
    await client.chat.completions.create({ model: `vertexfile/${GEMINI}`, messages: hello });
    await anthropic.messages.create({ model: `vertexfile/${CLAUDE}`, max_tokens: 10, messages: hello });
    assert.equal(sim.tokenRequests.get(SA.file), 2);
    const [first, second] = callsSince(from).map((r) => r.headers.authorization);
    assert.notEqual(first, second);
  });

  test('a key the token endpoint refuses is upstream_authentication_error, and no model call is made', async () => {
    const from = sim.requests.length;
    const err = await thrown(() => client.chat.completions.create({ model: `vertexbad/${GEMINI}`, messages: hello }));
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.equal(err.status, 401);
    assert.equal(err.code, 'upstream_authentication_error');
    assert.equal(callsSince(from).length, 0);
  });
});

describe('Anthropic Messages to Gemini on Vertex AI', () => {
  test('is translated to :generateContent and answered as an Anthropic message', async () => {
    const from = sim.requests.length;
    const message = await anthropic.messages.create({ model: `vertex/${GEMINI}`, max_tokens: 20, messages: hello });
    assert.equal(message.content[0]!.type === 'text' && message.content[0].text, VERTEX_SIM_REPLY);
    assert.equal(callsSince(from)[0]!.path, `${MODELS_PATH}/google/models/${GEMINI}:generateContent`);
  });
});

describe('OpenAI Responses and embeddings to Vertex AI', () => {
  test('to Gemini: translated by the Gemini codec to :generateContent, the answer as output_text', async () => {
    const from = sim.requests.length;
    const response = await client.responses.create({ model: `vertex/${GEMINI}`, input: 'Say hello' });
    assert.equal(response.output_text, VERTEX_SIM_REPLY);
    assert.equal(callsSince(from)[0]!.path, `${MODELS_PATH}/google/models/${GEMINI}:generateContent`);
  });

  test('to Claude: translated through Anthropic\'s mapping to :rawPredict, the answer as output_text', async () => {
    const from = sim.requests.length;
    const response = await client.responses.create({ model: `vertex/${CLAUDE}`, input: 'Say hello', max_output_tokens: 40 });
    assert.equal(response.output_text, VERTEX_SIM_REPLY);
    const [sent] = callsSince(from);
    assert.equal(sent!.path, `${MODELS_PATH}/anthropic/models/${CLAUDE}:rawPredict`);
    assert.deepEqual([sent!.body!.anthropic_version, sent!.body!.max_tokens], ['vertex-2023-10-16', 40]);
  });

  test('embeddings are refused with 400, and nothing reaches Vertex AI', async () => {
    const from = sim.requests.length;
    const err = await thrown(() => client.embeddings.create({ model: `vertex/${GEMINI}`, input: 'hello' }));
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.equal(err.status, 400);
    assert.equal(callsSince(from).length, 0);
  });
});

describe('Vertex AI models in GET /api/v1/models', () => {
  test('the manifest\'s models are listed as vertex/<model>, owned by their publisher', async () => {
    const models = await client.models.list();
    const listed = models.data.filter((m) => m.id.startsWith('vertex/'));
    assert.deepEqual(listed.map((m) => [m.id, m.owned_by]).sort(), [[`vertex/${CLAUDE}`, 'anthropic'], [`vertex/${GEMINI}`, 'google']]);
  });
});

describe('Vertex AI errors', () => {
  test('a 429 RESOURCE_EXHAUSTED is retried, and answered 429 rate_limit_exceeded with its RetryInfo delay when it persists', async () => {
    const from = sim.requests.length;
    sim.fail(1);
    const data = await client.chat.completions.create({ model: `vertex/${GEMINI}`, messages: hello });
    assert.equal(data.choices[0]!.message.content, VERTEX_SIM_REPLY);
    assert.equal(callsSince(from).length, 2, 'one throttled attempt, one served');
    const raw = await fetch(`${tg.gateway.origin}/api/v1/chat/completions`, {
      method: 'POST', headers: { authorization: `Bearer ${tg.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'vertex/sim-throttle', messages: hello }),
    });
    assert.equal(raw.status, 429);
    assert.equal(raw.headers.get('retry-after'), '2');
    assert.equal(((await raw.json()) as { error: { code: string } }).error.code, 'rate_limit_exceeded');
  });

  test('PERMISSION_DENIED is upstream_authentication_error', async () => {
    const err = await thrown(() => client.chat.completions.create({ model: 'vertex/sim-denied', messages: hello }));
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.equal(err.status, 403);
    assert.equal(err.code, 'upstream_authentication_error');
  });

  test('NOT_FOUND is model_not_found, naming the model', async () => {
    const err = await thrown(() => client.chat.completions.create({ model: 'vertex/sim-missing', messages: hello }));
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.equal(err.status, 404);
    assert.equal(err.code, 'model_not_found');
    assert.match(err.message, /sim-missing/);
  });

  test('a model id that could rewrite the URL path is refused before any call', async () => {
    const from = sim.requests.length;
    const err = await thrown(() => client.chat.completions.create({ model: 'vertex/gemini-2.5-flash:generateContent/../x', messages: hello }));
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.equal(err.status, 400);
    assert.equal(callsSince(from).length, 0);
  });
});
