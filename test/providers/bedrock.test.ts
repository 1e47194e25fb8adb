/**
 * The AWS Bedrock provider through the real in-process gateway: the official `@anthropic-ai/sdk`
 * (Claude Code's path, `/api/v1/messages`) and `openai` clients against Tollgate, the Bedrock
 * simulator upstream checking every call's SigV4 signature with the known secret.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout } from 'node:timers/promises';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import type { TestGateway } from '../helpers/test-gateway.ts';
import { collect, startProviderGateway, thrown } from '../helpers/provider-gateway.ts';
import {
  startBedrockSimulator, BEDROCK_SIM_KEYS, BEDROCK_SIM_TOOL_ANSWER, BEDROCK_SIM_TOOL_INPUT, BEDROCK_SIM_TOOL_USE_ID, BEDROCK_SIM_PIECES, BEDROCK_SIM_REPLY, CLAUDE_SIM_USAGE, CONVERSE_SIM_USAGE,
  INFERENCE_PROFILES, INFERENCE_PROFILES_PER_PAGE, type BedrockSimulator,
} from '../helpers/bedrock-simulator.ts';
import type { RecordedRequest } from '../helpers/sim-http.ts';
import { tempDir } from '../helpers/tmp.ts';

const CLAUDE = 'anthropic.claude-sonnet-4-6-v1:0';
const NOVA = 'amazon.nova-pro-v1:0';
const STATIC_KEY = `${BEDROCK_SIM_KEYS.accessKeyId}:${BEDROCK_SIM_KEYS.secretAccessKey}`;
const ENV_KEY_ID = 'AKIAFROMENVIRONMENT01';
const ENV_SECRET = 'env/secret+0000000000000000000000000000001';
const PROFILE_KEYS = { accessKeyId: 'AKIAFROMPROFILEFILE1', secretAccessKey: 'profile/secret+00000000000000000000000001', sessionToken: 'profile-session-token-0001' };
const weatherTool: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

let sim: BedrockSimulator;
let tg: TestGateway;
let client: OpenAI;
let anthropic: Anthropic;
const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY, token: process.env.AWS_SESSION_TOKEN };
const AWS_FILE_VARS = ['AWS_SHARED_CREDENTIALS_FILE', 'AWS_CONFIG_FILE', 'AWS_PROFILE'] as const;

const callsSince = (from: number): RecordedRequest[] => sim.requests.slice(from).filter((r) => r.method === 'POST');
/** The access key ids that signed the model calls since `from`. */
const keyIdsSince = (from: number): string[] => callsSince(from).map((r) => /Credential=([^/]+)\//.exec(String(r.headers.authorization))?.[1] ?? '');
const promptOf = (u: typeof CLAUDE_SIM_USAGE) => u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens;

/** Keys of the n-th run of a credential_process script (`processProfile`) of `series` (A, B); the simulator knows the first five of each. */
const processKey = (series: string, n: number) => ({
  accessKeyId: `ASIAPROCESS${series}${String(n).padStart(8, '0')}`, secretAccessKey: `process/secret+${series}${String(n).padStart(24, '0')}`, sessionToken: `process-session-${series}${n}`,
});

/**
 * A shared config whose profile `tollgate-process` gets its keys from a `credential_process`: a Node
 * script printing AWS's process-credentials JSON, the n-th run the n-th keys (`processKey`), expiring
 * `firstLifetimeMs` after the first run and an hour after later ones. `runs()` lists each run's key id
 * and expiry.
 */
function processProfile(series: string, firstLifetimeMs: number): { configFile: string; credentialsFile: string; runs(): Array<{ accessKeyId: string; expiresAtMs: number }> } {
  const dir = tempDir('tollgate-aws-process-');
  const log = join(dir, 'runs');
  const script = join(dir, 'credentials.mjs');
  writeFileSync(log, '');
  writeFileSync(script, [
    "import { appendFileSync, readFileSync } from 'node:fs';",
    `const n = readFileSync(${JSON.stringify(log)}, 'utf8').split('\\n').filter(Boolean).length + 1;`,
    `const keys = JSON.parse(${JSON.stringify(JSON.stringify([1, 2, 3, 4, 5].map((n) => processKey(series, n))))})[n - 1];`,
    `const expiration = new Date(Date.now() + (n === 1 ? ${firstLifetimeMs} : 3_600_000)).toISOString();`,
    `appendFileSync(${JSON.stringify(log)}, keys.accessKeyId + ' ' + expiration + '\\n');`,
    'console.log(JSON.stringify({ Version: 1, AccessKeyId: keys.accessKeyId, SecretAccessKey: keys.secretAccessKey, SessionToken: keys.sessionToken, Expiration: expiration }));',
  ].join('\n'));
  const configFile = join(dir, 'config');
  writeFileSync(configFile, `[profile tollgate-process]\ncredential_process = "${process.execPath}" "${script}"\n`);
  const credentialsFile = join(dir, 'credentials');
  writeFileSync(credentialsFile, '');
  const runs = () => readFileSync(log, 'utf8').split('\n').filter(Boolean).map((line) => {
    const [accessKeyId, expiration] = line.split(' ');
    return { accessKeyId: accessKeyId!, expiresAtMs: Date.parse(expiration!) };
  });
  return { configFile, credentialsFile, runs };
}

/** Runs `fn` with the gateway's (this process's) AWS environment: no keys, only `vars`; restored after. */
async function withAwsEnv(vars: Partial<Record<typeof AWS_FILE_VARS[number], string>>, fn: () => Promise<void>): Promise<void> {
  const before = Object.fromEntries(['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', ...AWS_FILE_VARS].map((name) => [name, process.env[name]]));
  delete process.env.AWS_ACCESS_KEY_ID;
  delete process.env.AWS_SECRET_ACCESS_KEY;
  Object.assign(process.env, vars);
  try {
    await fn();
  } finally {
    for (const [name, value] of Object.entries(before)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

before(async () => {
  sim = await startBedrockSimulator();
  sim.keys.set(ENV_KEY_ID, ENV_SECRET);
  // The environment's principal may list foundation models, not inference profiles.
  sim.profileListDenied.add(ENV_KEY_ID);
  sim.keys.set(PROFILE_KEYS.accessKeyId, PROFILE_KEYS.secretAccessKey);
  for (const key of ['A', 'B'].flatMap((series) => [1, 2, 3, 4, 5].map((n) => processKey(series, n)))) sim.keys.set(key.accessKeyId, key.secretAccessKey);
  // The default chain's first source: the environment of the gateway's process (this one).
  process.env.AWS_ACCESS_KEY_ID = ENV_KEY_ID;
  process.env.AWS_SECRET_ACCESS_KEY = ENV_SECRET;
  delete process.env.AWS_SESSION_TOKEN;
  const endpoints = { baseUrl: sim.endpoint, controlPlaneUrl: sim.endpoint, region: 'us-east-1' };
  ({ tg, client, anthropic } = await startProviderGateway({
    bedrock: { type: 'bedrock', ...endpoints, accessKeyId: BEDROCK_SIM_KEYS.accessKeyId, secretAccessKey: BEDROCK_SIM_KEYS.secretAccessKey },
    bedrockenv: { type: 'bedrock', ...endpoints },
    bedrockprofile: { type: 'bedrock', ...endpoints },
    bedrockprocess: { type: 'bedrock', ...endpoints },
    bedrockprocesslong: { type: 'bedrock', ...endpoints },
    bedrockbad: { type: 'bedrock', ...endpoints, accessKeyId: BEDROCK_SIM_KEYS.accessKeyId, secretAccessKey: 'not-the-secret-0000000000000000000000000' },
    bedrockpool: { type: 'bedrock', ...endpoints, apiKeys: ['AKIAUNKNOWNKEY000001:some-secret-000000000000000000000000000', STATIC_KEY] },
  }));
});

after(async () => {
  await tg?.close();
  await sim?.close();
  for (const [name, value] of [['AWS_ACCESS_KEY_ID', saved.id], ['AWS_SECRET_ACCESS_KEY', saved.secret], ['AWS_SESSION_TOKEN', saved.token]] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

describe('Claude on Bedrock through /api/v1/messages (Claude Code\'s path)', () => {
  test('a message goes as the client\'s body without model, with anthropic_version and anthropic_beta, signed, to /invoke', async () => {
    const from = sim.requests.length;
    const failures = sim.signatureFailures;
    const params = {
      model: `bedrock/${CLAUDE}`, max_tokens: 300, system: [{ type: 'text' as const, text: 'Be brief.', cache_control: { type: 'ephemeral' as const } }],
      messages: [{ role: 'user' as const, content: 'Say hello' }], metadata: { user_id: 'u-1' },
    };
    const { data, response } = await anthropic.messages.create(params, { headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14' } }).withResponse();
    assert.equal(data.content[0]!.type === 'text' && data.content[0].text, BEDROCK_SIM_REPLY);
    assert.equal(data.id, 'msg_bdrk_01SIM');
    const [sent] = callsSince(from);
    assert.equal(sent!.path, `/model/${encodeURIComponent(CLAUDE)}/invoke`);
    const { model: _model, ...expected } = params;
    assert.deepEqual(sent!.body, { ...expected, anthropic_version: 'bedrock-2023-05-31', anthropic_beta: ['interleaved-thinking-2025-05-14'] });
    assert.match(String(sent!.headers.authorization), new RegExp(`^AWS4-HMAC-SHA256 Credential=${BEDROCK_SIM_KEYS.accessKeyId}/\\d{8}/us-east-1/bedrock/aws4_request`));
    assert.equal(sim.signatureFailures, failures, 'the signature was valid');
    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.deepEqual([row.provider, row.prompt_tokens, row.completion_tokens, row.cached_tokens, row.cache_write_tokens],
      ['bedrock', promptOf(CLAUDE_SIM_USAGE), CLAUDE_SIM_USAGE.output_tokens, CLAUDE_SIM_USAGE.cache_read_input_tokens, CLAUDE_SIM_USAGE.cache_creation_input_tokens]);
    assert.equal(row.unpriced, 0);
    // Sonnet 4.6 in-region at the dataset's regional rates: $3.30 in, $16.50 out, $0.33 cache read, $4.125 cache write per million.
    assert.equal(row.cost_nanos, 12 * 3300 + 7 * 16500 + 100 * 330 + 20 * 4125);
  });

  test('a stream arrives as Anthropic SSE decoded from AWS\'s event stream, billed from its usage', async () => {
    const from = sim.requests.length;
    const stream = anthropic.messages.stream({ model: `bedrock/${CLAUDE}`, max_tokens: 300, messages: [{ role: 'user', content: 'Say hello' }] });
    const events = await collect(stream);
    const final = await stream.finalMessage();
    assert.deepEqual(events.map((e) => e.type).filter((t, i, all) => all.indexOf(t) === i),
      ['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    assert.equal(final.content[0]!.type === 'text' && final.content[0]!.text, BEDROCK_SIM_REPLY);
    assert.equal(final.usage.cache_read_input_tokens, CLAUDE_SIM_USAGE.cache_read_input_tokens);
    const [sent] = callsSince(from);
    assert.equal(sent!.path, `/model/${encodeURIComponent(CLAUDE)}/invoke-with-response-stream`);
    assert.equal(sent!.body!.stream, undefined);
    const requestId = (await stream.withResponse()).response.headers.get('x-request-id')!;
    const row = await tg.logRow(requestId);
    assert.deepEqual([row.prompt_tokens, row.completion_tokens, row.cached_tokens], [promptOf(CLAUDE_SIM_USAGE), CLAUDE_SIM_USAGE.output_tokens, CLAUDE_SIM_USAGE.cache_read_input_tokens]);
    assert.ok(row.cost_nanos! > 0, `cost ${row.cost_nanos}`);
  });

  test('an exception in the event stream ends the stream with Anthropic\'s error event', async () => {
    const stream = anthropic.messages.stream({ model: 'bedrock/us.anthropic.claude-sim-stream-throttled-v1:0', max_tokens: 300, messages: [{ role: 'user', content: 'hi' }] });
    const err = await thrown(() => collect(stream));
    assert.ok(err instanceof Anthropic.APIError, `expected an APIError, got ${String(err)}`);
    assert.match(err.message, /rate_limit_error|Too many tokens/);
  });

  test('a ThrottlingException reaches a Messages client as Anthropic\'s 429 error', async () => {
    const throttled = await thrown(() => anthropic.messages.create({ model: 'bedrock/sim.throttle', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }));
    assert.ok(throttled instanceof Anthropic.APIError, String(throttled));
    assert.equal(throttled.status, 429);
    assert.equal((throttled.error as { type?: string }).type, 'error');
    // A native Claude call too: Bedrock's {"message"} body is not relayed, the error is rendered as Anthropic's.
    const native = await thrown(() => anthropic.messages.create({ model: 'bedrock/us.anthropic.claude-sim-throttle-v1:0', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }));
    assert.ok(native instanceof Anthropic.APIError, String(native));
    assert.equal(native.status, 429);
    assert.equal((native.error as { type?: string; error?: { type?: string } }).error?.type, 'rate_limit_error');
  });
});

describe('OpenAI Responses to Bedrock', () => {
  test('to Claude: translated through Anthropic\'s mapping to /invoke, the answer as output_text', async () => {
    const from = sim.requests.length;
    const response = await client.responses.create({ model: `bedrock/${CLAUDE}`, instructions: 'Be brief.', input: 'Say hello', max_output_tokens: 40 });
    assert.equal(response.output_text, BEDROCK_SIM_REPLY);
    const [sent] = callsSince(from);
    assert.equal(sent!.path, `/model/${encodeURIComponent(CLAUDE)}/invoke`);
    assert.deepEqual([sent!.body!.anthropic_version, sent!.body!.max_tokens, sent!.body!.system], ['bedrock-2023-05-31', 40, [{ type: 'text', text: 'Be brief.' }]]);
  });

  test('to another model: translated to Converse, the answer as output_text', async () => {
    const from = sim.requests.length;
    const response = await client.responses.create({ model: `bedrock/${NOVA}`, input: 'Say hello' });
    assert.equal(response.output_text, BEDROCK_SIM_REPLY);
    assert.equal(callsSince(from)[0]!.path, `/model/${encodeURIComponent(NOVA)}/converse`);
  });

  test('embeddings are refused with 400 naming the provider, and nothing reaches Bedrock', async () => {
    const from = sim.requests.length;
    const err = await thrown(() => client.embeddings.create({ model: `bedrock/${NOVA}`, input: 'hello' }));
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.equal(err.status, 400);
    assert.match(err.message, /bedrock/i);
    assert.equal(callsSince(from).length, 0);
  });
});

describe('Messages to a model that is not Claude', () => {
  test('is translated to Converse and answered as an Anthropic message', async () => {
    const from = sim.requests.length;
    const message = await anthropic.messages.create({ model: `bedrock/${NOVA}`, max_tokens: 20, messages: [{ role: 'user', content: 'Say hello' }] });
    assert.equal(message.content[0]!.type === 'text' && message.content[0].text, BEDROCK_SIM_REPLY);
    assert.equal(callsSince(from)[0]!.path, `/model/${encodeURIComponent(NOVA)}/converse`);
    assert.deepEqual(callsSince(from)[0]!.body!.inferenceConfig, { maxTokens: 20 });
  });
});

describe('OpenAI chat to Bedrock', () => {
  test('to Claude: translated through Anthropic\'s mapping, invoke with anthropic_version, usage with the cache', async () => {
    const from = sim.requests.length;
    const data = await client.chat.completions.create({ model: `bedrock/${CLAUDE}`, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say hello' }], max_tokens: 50 });
    assert.equal(data.choices[0]!.message.content, BEDROCK_SIM_REPLY);
    assert.equal(data.usage!.prompt_tokens, promptOf(CLAUDE_SIM_USAGE));
    assert.equal(data.usage!.prompt_tokens_details!.cached_tokens, CLAUDE_SIM_USAGE.cache_read_input_tokens);
    const [sent] = callsSince(from);
    assert.equal(sent!.body!.anthropic_version, 'bedrock-2023-05-31');
    assert.equal(sent!.body!.model, undefined);
    assert.equal(sent!.body!.max_tokens, 50);
    assert.deepEqual(sent!.body!.system, [{ type: 'text', text: 'Be brief.' }]);
  });

  test('to Claude, streamed: the text in order, the finish reason and the usage chunk', async () => {
    const chunks = await collect(await client.chat.completions.create({ model: `bedrock/${CLAUDE}`, messages: [{ role: 'user', content: 'Say hello' }], stream: true, stream_options: { include_usage: true } }));
    assert.deepEqual(chunks.map((c) => c.choices[0]?.delta.content ?? '').filter(Boolean), BEDROCK_SIM_PIECES);
    assert.equal(chunks.find((c) => c.choices[0]?.finish_reason)!.choices[0]!.finish_reason, 'stop');
    assert.equal(chunks.at(-1)!.usage!.completion_tokens, CLAUDE_SIM_USAGE.output_tokens);
  });

  test('to another model through Converse: messages, system and inferenceConfig translated, the answer and usage back', async () => {
    const from = sim.requests.length;
    const { data, response } = await client.chat.completions.create({
      model: `bedrock/${NOVA}`, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say hello' }], max_tokens: 64, temperature: 0.5, stop: ['END'],
    }).withResponse();
    assert.equal(data.choices[0]!.message.content, BEDROCK_SIM_REPLY);
    assert.equal(data.choices[0]!.finish_reason, 'stop');
    const [sent] = callsSince(from);
    assert.equal(sent!.path, `/model/${encodeURIComponent(NOVA)}/converse`);
    assert.deepEqual(sent!.body, {
      messages: [{ role: 'user', content: [{ text: 'Say hello' }] }], system: [{ text: 'Be brief.' }],
      inferenceConfig: { maxTokens: 64, temperature: 0.5, stopSequences: ['END'] },
    });
    const row = await tg.logRow(response.headers.get('x-request-id')!);
    assert.deepEqual([row.prompt_tokens, row.completion_tokens], [CONVERSE_SIM_USAGE.inputTokens, CONVERSE_SIM_USAGE.outputTokens]);
    assert.ok(row.cost_nanos! > 0, `Nova Pro priced from the dataset: ${row.cost_nanos}`);
  });

  test('to another model through ConverseStream: the text in order, finish reason and usage', async () => {
    const from = sim.requests.length;
    const chunks = await collect(await client.chat.completions.create({ model: `bedrock/${NOVA}`, messages: [{ role: 'user', content: 'Say hello' }], stream: true, stream_options: { include_usage: true } }));
    assert.deepEqual(chunks.map((c) => c.choices[0]?.delta.content ?? '').filter(Boolean), BEDROCK_SIM_PIECES);
    assert.equal(chunks.find((c) => c.choices[0]?.finish_reason)!.choices[0]!.finish_reason, 'stop');
    assert.deepEqual([chunks.at(-1)!.usage!.prompt_tokens, chunks.at(-1)!.usage!.completion_tokens], [CONVERSE_SIM_USAGE.inputTokens, CONVERSE_SIM_USAGE.outputTokens]);
    assert.equal(callsSince(from)[0]!.path, `/model/${encodeURIComponent(NOVA)}/converse-stream`);
  });

  test('to another model, a tool call round trip through Converse: toolUse answered as tool_calls, the tool message sent back as toolResult', async () => {
    const from = sim.requests.length;
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = await client.chat.completions.create({ model: `bedrock/${NOVA}`, messages, tools: [weatherTool] });
    assert.equal(first.choices[0]!.finish_reason, 'tool_calls');
    const [call] = first.choices[0]!.message.tool_calls!;
    assert.ok(call && call.type === 'function');
    assert.deepEqual([call.id, call.function.name, JSON.parse(call.function.arguments)], [BEDROCK_SIM_TOOL_USE_ID, 'get_weather', BEDROCK_SIM_TOOL_INPUT]);

    const followUp: OpenAI.ChatCompletionMessageParam[] = [...messages, first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: '18 °C' }];
    const chunks = await collect(await client.chat.completions.create({ model: `bedrock/${NOVA}`, messages: followUp, tools: [weatherTool], stream: true }));
    assert.equal(chunks.map((c) => c.choices[0]?.delta.content ?? '').join(''), BEDROCK_SIM_TOOL_ANSWER);
    assert.equal(chunks.find((c) => c.choices[0]?.finish_reason)!.choices[0]!.finish_reason, 'stop');

    const [asked, answered] = callsSince(from);
    const spec = (asked!.body!.toolConfig as { tools: Array<{ toolSpec: { name: string; inputSchema: { json: unknown } } }> }).tools[0]!.toolSpec;
    assert.deepEqual([spec.name, spec.inputSchema.json], ['get_weather', weatherTool.function.parameters]);
    assert.equal(answered!.path, `/model/${encodeURIComponent(NOVA)}/converse-stream`);
    assert.deepEqual(answered!.body!.messages, [
      { role: 'user', content: [{ text: 'Weather in Paris?' }] },
      { role: 'assistant', content: [{ toolUse: { toolUseId: BEDROCK_SIM_TOOL_USE_ID, name: 'get_weather', input: BEDROCK_SIM_TOOL_INPUT } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: BEDROCK_SIM_TOOL_USE_ID, content: [{ text: '18 °C' }] } }] },
    ]);
  });

  test('to another model, a streamed tool call arrives as tool_calls deltas whose arguments join to the input', async () => {
    const chunks = await collect(await client.chat.completions.create({ model: `bedrock/${NOVA}`, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools: [weatherTool], stream: true }));
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    assert.equal(deltas[0]!.id, BEDROCK_SIM_TOOL_USE_ID);
    assert.equal(deltas[0]!.function!.name, 'get_weather');
    assert.deepEqual(JSON.parse(deltas.map((d) => d.function?.arguments ?? '').join('')), BEDROCK_SIM_TOOL_INPUT);
    assert.equal(chunks.find((c) => c.choices[0]?.finish_reason)!.choices[0]!.finish_reason, 'tool_calls');
  });
});

describe('Bedrock credentials and errors', () => {

  test('a 429 ThrottlingException is retried, and answered 429 rate_limit_exceeded when it persists', async () => {
    const from = sim.requests.length;
    sim.fail(1);
    const data = await client.chat.completions.create({ model: `bedrock/${NOVA}`, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(data.choices[0]!.message.content, BEDROCK_SIM_REPLY);
    assert.equal(callsSince(from).length, 2, 'one throttled attempt, one served');
    const err = await thrown(() => client.chat.completions.create({ model: 'bedrock/sim.throttle', messages: [{ role: 'user', content: 'hi' }] }));
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.equal(err.status, 429);
    assert.equal(err.code, 'rate_limit_exceeded');
  });

  test('a refused signature (wrong secret) is upstream_authentication_error, in the OpenAI and the Anthropic shape', async () => {
    const failures = sim.signatureFailures;
    const err = await thrown(() => client.chat.completions.create({ model: `bedrockbad/${NOVA}`, messages: [{ role: 'user', content: 'hi' }] }));
    assert.ok(err instanceof OpenAI.APIError, String(err));
    assert.equal(err.status, 403);
    assert.equal(err.code, 'upstream_authentication_error');
    const denied = await thrown(() => anthropic.messages.create({ model: 'bedrock/sim.denied', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }));
    assert.ok(denied instanceof Anthropic.APIError, String(denied));
    assert.equal(denied.status, 403);
    assert.match(JSON.stringify(denied.error), /"type":"error".*upstream_authentication_error|rejected the gateway's credential/);
    assert.ok(sim.signatureFailures > failures, 'the simulator refused the wrong signature');
  });

  test('a pool of static keys: a key the upstream does not know is refused, the next key serves', async () => {
    const data = await client.chat.completions.create({ model: `bedrockpool/${NOVA}`, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(data.choices[0]!.message.content, BEDROCK_SIM_REPLY);
  });

  test('without static keys, the default AWS chain signs with the environment\'s keys', async () => {
    const from = sim.requests.length;
    const data = await client.chat.completions.create({ model: `bedrockenv/${CLAUDE}`, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(data.choices[0]!.message.content, BEDROCK_SIM_REPLY);
    assert.match(String(callsSince(from)[0]!.headers.authorization), new RegExp(`Credential=${ENV_KEY_ID}/`));
  });

  test('without static keys or environment keys, the default AWS chain signs with the profile AWS_PROFILE names in AWS_SHARED_CREDENTIALS_FILE', async () => {
    const dir = tempDir('tollgate-aws-');
    const credentials = join(dir, 'credentials');
    writeFileSync(credentials, [
      '[default]', 'aws_access_key_id = AKIANOTTHISPROFILE01', 'aws_secret_access_key = wrong', '',
      '[tollgate-bedrock]', `aws_access_key_id = ${PROFILE_KEYS.accessKeyId}`, `aws_secret_access_key = ${PROFILE_KEYS.secretAccessKey}`,
      `aws_session_token = ${PROFILE_KEYS.sessionToken}`, '',
    ].join('\n'));
    writeFileSync(join(dir, 'config'), '');
    // The gateway's environment (this process): no keys, only the files and the profile's name.
    await withAwsEnv({ AWS_SHARED_CREDENTIALS_FILE: credentials, AWS_CONFIG_FILE: join(dir, 'config'), AWS_PROFILE: 'tollgate-bedrock' }, async () => {
      const from = sim.requests.length;
      const failures = sim.signatureFailures;
      const data = await client.chat.completions.create({ model: `bedrockprofile/${NOVA}`, messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(data.choices[0]!.message.content, BEDROCK_SIM_REPLY);
      const [sent] = callsSince(from);
      assert.match(String(sent!.headers.authorization), new RegExp(`Credential=${PROFILE_KEYS.accessKeyId}/`));
      assert.equal(sent!.headers['x-amz-security-token'], PROFILE_KEYS.sessionToken);
      assert.equal(sim.signatureFailures, failures, 'the signature was valid');
    });
  });

  test('temporary keys from a profile\'s credential_process: once they expire, the chain runs the process again and the next call, signed with the new keys, succeeds', async () => {
    // Five seconds: enough for the process to start on a busy machine, little to wait for.
    const profile = processProfile('A', 5_000);
    await withAwsEnv({ AWS_SHARED_CREDENTIALS_FILE: profile.credentialsFile, AWS_CONFIG_FILE: profile.configFile, AWS_PROFILE: 'tollgate-process' }, async () => {
      const from = sim.requests.length;
      const first = await client.chat.completions.create({ model: `bedrockprocess/${NOVA}`, messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(first.choices[0]!.message.content, BEDROCK_SIM_REPLY);
      const [firstKey] = keyIdsSince(from);
      const firstRun = profile.runs().find((run) => run.accessKeyId === firstKey);
      assert.ok(firstRun, `${firstKey} came from the process`);
      // The keys expire, and with them the session: AWS refuses their token from now on.
      await setTimeout(Math.max(0, firstRun.expiresAtMs - Date.now() + 50));
      sim.expired.add(firstKey!);
      const next = sim.requests.length;
      const failures = sim.signatureFailures;
      const second = await client.chat.completions.create({ model: `bedrockprocess/${NOVA}`, messages: [{ role: 'user', content: 'hi' }] });
      assert.equal(second.choices[0]!.message.content, BEDROCK_SIM_REPLY);
      const [secondKey] = keyIdsSince(next);
      assert.equal(keyIdsSince(next).length, 1, 'served by the first attempt, not after a refusal');
      assert.notEqual(secondKey, firstKey);
      const secondRun = profile.runs().findIndex((run) => run.accessKeyId === secondKey);
      assert.ok(secondRun > 0, `${secondKey} came from a later run of the process`);
      assert.equal(callsSince(next)[0]!.headers['x-amz-security-token'], processKey('A', secondRun + 1).sessionToken);
      assert.equal(sim.signatureFailures, failures, 'signed with the new keys\' secret');
    });
  });

  test('temporary keys from credential_process far from their expiry are reused: the process runs once for several calls', async () => {
    const profile = processProfile('B', 3_600_000);
    await withAwsEnv({ AWS_SHARED_CREDENTIALS_FILE: profile.credentialsFile, AWS_CONFIG_FILE: profile.configFile, AWS_PROFILE: 'tollgate-process' }, async () => {
      const from = sim.requests.length;
      for (let i = 0; i < 3; i++) {
        const data = await client.chat.completions.create({ model: `bedrockprocesslong/${NOVA}`, messages: [{ role: 'user', content: 'hi' }] });
        assert.equal(data.choices[0]!.message.content, BEDROCK_SIM_REPLY);
      }
      assert.deepEqual(keyIdsSince(from), Array(3).fill(processKey('B', 1).accessKeyId));
      assert.equal(profile.runs().length, 1);
    });
  });

  test('GET /api/v1/models lists ListFoundationModels\' models under the provider', async () => {
    const models = await client.models.list();
    const ids = models.data.map((m) => m.id);
    assert.ok(ids.includes(`bedrock/${CLAUDE}`) && ids.includes(`bedrock/${NOVA}`), ids.join(', '));
    const listCall = sim.requests.find((r) => r.method === 'GET' && r.path === '/foundation-models');
    assert.equal(listCall?.query.byOutputModality, 'TEXT');
  });

  test('GET /api/v1/models lists ListInferenceProfiles\' active text-model profiles beside the foundation models, every page followed', async () => {
    const models = await client.models.list();
    const listed = new Map(models.data.filter((m) => m.id.startsWith('bedrock/')).map((m) => [m.id.slice('bedrock/'.length), m]));
    for (const id of ['us.anthropic.claude-sonnet-4-6-v1:0', 'global.anthropic.claude-sonnet-4-6-v1:0', 'us.amazon.nova-pro-v1:0']) {
      assert.ok(listed.has(id), `${id} listed among ${[...listed.keys()].join(', ')}`);
    }
    // The third page holds the inactive profile: listed only if the pages were not followed, or the status was ignored.
    assert.ok(!listed.has('eu.amazon.nova-pro-v1:0'), 'an inactive profile is not listed');
    assert.ok(!listed.has('us.cohere.embed-v4:0'), 'an embedding model\'s profile is not a chat model');
    assert.equal(listed.get('us.anthropic.claude-sonnet-4-6-v1:0')!.owned_by, 'Anthropic');
    const pages = sim.requests.filter((r) => r.method === 'GET' && r.path === '/inference-profiles');
    const pageCount = Math.ceil(INFERENCE_PROFILES.length / INFERENCE_PROFILES_PER_PAGE);
    // Several providers list at once here, so their pages interleave: count the distinct tokens sent.
    assert.ok(pages.some((page) => page.query.nextToken === undefined), 'the first page asked for without a token');
    assert.equal(new Set(pages.map((page) => page.query.nextToken).filter(Boolean)).size, pageCount - 1, 'each later page asked for with the token the previous one gave');
  });

  test('a principal that may not call ListInferenceProfiles still has its foundation models listed', async () => {
    const ids = (await client.models.list()).data.map((m) => m.id);
    assert.ok(ids.includes(`bedrockenv/${CLAUDE}`) && ids.includes(`bedrockenv/${NOVA}`), ids.join(', '));
    assert.ok(!ids.some((id) => id.startsWith('bedrockenv/us.')), 'no profiles for it');
    const denied = sim.requests.filter((r) => r.path === '/inference-profiles' && String(r.headers.authorization).includes(`Credential=${ENV_KEY_ID}/`));
    assert.ok(denied.length > 0, 'its profile list was asked for and refused');
  });

  test('a profile id listed in GET /api/v1/models is callable: Claude through its us. profile', async () => {
    const message = await anthropic.messages.create({ model: 'bedrock/us.anthropic.claude-sonnet-4-6-v1:0', max_tokens: 20, messages: [{ role: 'user', content: 'Say hello' }] });
    assert.equal(message.content[0]!.type === 'text' && message.content[0].text, BEDROCK_SIM_REPLY);
  });
});
