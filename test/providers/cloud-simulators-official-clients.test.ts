/**
 * The Bedrock and Vertex simulators against the clouds' official clients, with no gateway between:
 * `@aws-sdk/client-bedrock-runtime` (SigV4 signing, AWS's binary event stream decoded by the SDK,
 * its named exceptions), `@anthropic-ai/vertex-sdk` and `@google/genai` in Vertex mode (both getting
 * an OAuth token from the simulator's `/token` through `google-auth-library`, with a real
 * service-account JWT grant). What these clients accept is the wire format the gateway is tested
 * against, so a simulator drifting from the real services fails here first. The Azure simulator
 * has the same check in azure.test.ts. Every `assert.ok` has a message (see azure.test.ts).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand, InvokeModelCommand, InvokeModelWithResponseStreamCommand, ThrottlingException,
  type ConverseStreamOutput, type Tool,
} from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { AnthropicVertex } from '@anthropic-ai/vertex-sdk';
import { GoogleGenAI } from '@google/genai';
import { GoogleAuth, gaxios, type GoogleAuthOptions } from 'google-auth-library';
import {
  startBedrockSimulator, BEDROCK_SIM_KEYS, BEDROCK_SIM_PIECES, BEDROCK_SIM_REPLY, BEDROCK_SIM_TOOL_INPUT, BEDROCK_SIM_TOOL_USE_ID, CLAUDE_SIM_USAGE,
  CONVERSE_SIM_USAGE, SIM_REGION, type BedrockSimulator,
} from '../helpers/bedrock-simulator.ts';
import {
  startVertexSimulator, VERTEX_ANTHROPIC_VERSIONS, VERTEX_CLAUDE_USAGE, VERTEX_GEMINI_USAGE, VERTEX_SIM_LOCATION, VERTEX_SIM_PIECES, VERTEX_SIM_PROJECT, VERTEX_SIM_REPLY,
  type VertexSimulator,
} from '../helpers/vertex-simulator.ts';
import { collect, thrown } from '../helpers/provider-gateway.ts';

const CLAUDE_BEDROCK = 'anthropic.claude-sonnet-4-6-v1:0';
const NOVA = 'amazon.nova-pro-v1:0';
const CLAUDE_VERTEX = 'claude-sonnet-4-5@20250929';
const GEMINI = 'gemini-2.5-flash';
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

let bedrockSim: BedrockSimulator;
let vertexSim: VertexSimulator;

before(async () => {
  [bedrockSim, vertexSim] = await Promise.all([startBedrockSimulator(), startVertexSimulator()]);
});

after(async () => {
  await bedrockSim?.close();
  await vertexSim?.close();
});

/**
 * The runtime client for the simulator. Its default transport is HTTP/2 (Bedrock serves it over
 * TLS); the simulator, like the gateway's upstream client, speaks HTTP/1.1 in clear, so the client
 * gets the SDK's own HTTP/1.1 handler, as the AWS docs show for forcing HTTP/1.1.
 */
const bedrock = (secretAccessKey = BEDROCK_SIM_KEYS.secretAccessKey) => new BedrockRuntimeClient({
  endpoint: bedrockSim.endpoint, region: SIM_REGION, maxAttempts: 1, requestHandler: new NodeHttpHandler(),
  credentials: { accessKeyId: BEDROCK_SIM_KEYS.accessKeyId, secretAccessKey },
});

const claudeBody = (extra: Record<string, unknown> = {}) => new TextEncoder().encode(JSON.stringify({
  anthropic_version: 'bedrock-2023-05-31', max_tokens: 100, messages: [{ role: 'user', content: 'Say hello' }], ...extra,
}));

describe('the Bedrock simulator against the official BedrockRuntimeClient', () => {
  test('InvokeModel: an Anthropic message for an Anthropic body, signed with SigV4', async () => {
    const failures = bedrockSim.signatureFailures;
    const out = await bedrock().send(new InvokeModelCommand({ modelId: CLAUDE_BEDROCK, contentType: 'application/json', accept: 'application/json', body: claudeBody() }));
    const message = JSON.parse(new TextDecoder().decode(out.body)) as { type: string; content: Array<{ text: string }>; usage: unknown };
    assert.equal(message.type, 'message');
    assert.equal(message.content[0]!.text, BEDROCK_SIM_REPLY);
    assert.deepEqual(message.usage, CLAUDE_SIM_USAGE);
    assert.equal(bedrockSim.signatureFailures, failures, 'the SDK\'s signature is accepted');
    // The SDK percent-encodes the model id's `:` in the path (and signs it so); the simulator decodes it.
    assert.equal(bedrockSim.requests.at(-1)!.path, `/model/${encodeURIComponent(CLAUDE_BEDROCK)}/invoke`);
  });

  test('InvokeModelWithResponseStream: the SDK decodes the event stream into Anthropic stream events', async () => {
    const out = await bedrock().send(new InvokeModelWithResponseStreamCommand({ modelId: CLAUDE_BEDROCK, contentType: 'application/json', body: claudeBody() }));
    const events: Array<Record<string, unknown>> = [];
    for await (const part of out.body!) {
      assert.ok(part.chunk?.bytes, `every part is a chunk: ${JSON.stringify(Object.keys(part))}`);
      events.push(JSON.parse(new TextDecoder().decode(part.chunk.bytes)) as Record<string, unknown>);
    }
    assert.deepEqual(events.map((e) => e.type), [
      'message_start', 'content_block_start', ...BEDROCK_SIM_PIECES.map(() => 'content_block_delta'), 'content_block_stop', 'message_delta', 'message_stop',
    ]);
    const text = events.filter((e) => e.type === 'content_block_delta').map((e) => (e.delta as { text: string }).text).join('');
    assert.equal(text, BEDROCK_SIM_REPLY);
    assert.equal((events.at(-2)!.usage as { output_tokens: number }).output_tokens, CLAUDE_SIM_USAGE.output_tokens);
    assert.equal((events[0]!.message as { usage: { input_tokens: number } }).usage.input_tokens, CLAUDE_SIM_USAGE.input_tokens);
    assert.equal((events.at(-1)!['amazon-bedrock-invocationMetrics'] as { outputTokenCount: number }).outputTokenCount, CLAUDE_SIM_USAGE.output_tokens);
  });

  test('InvokeModelWithResponseStream: a throttlingException mid-stream is thrown as the SDK\'s ThrottlingException', async () => {
    const out = await bedrock().send(new InvokeModelWithResponseStreamCommand({ modelId: 'sim.stream-throttled.anthropic.claude', body: claudeBody() }));
    let text = '';
    const err = await thrown(async () => {
      for await (const part of out.body!) {
        const event = JSON.parse(new TextDecoder().decode(part.chunk!.bytes)) as { delta?: { text?: string } };
        text += event.delta?.text ?? '';
      }
    });
    assert.ok(err instanceof ThrottlingException, `ThrottlingException, got ${String(err)}`);
    assert.equal(text, BEDROCK_SIM_PIECES[0]);
  });

  test('Converse and ConverseStream: text, usage and a toolUse answer', async () => {
    const client = bedrock();
    const messages = [{ role: 'user' as const, content: [{ text: 'Say hello' }] }];
    const plain = await client.send(new ConverseCommand({ modelId: NOVA, messages }));
    assert.equal(plain.output!.message!.content![0]!.text, BEDROCK_SIM_REPLY);
    assert.equal(plain.stopReason, 'end_turn');
    assert.deepEqual(plain.usage, CONVERSE_SIM_USAGE);

    const tools: Tool[] = [{ toolSpec: { name: 'get_weather', description: 'Weather of a city', inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } } } } } }];
    const called = await client.send(new ConverseCommand({ modelId: NOVA, messages, toolConfig: { tools } }));
    assert.equal(called.stopReason, 'tool_use');
    assert.deepEqual(called.output!.message!.content![0]!.toolUse, { toolUseId: BEDROCK_SIM_TOOL_USE_ID, name: 'get_weather', input: BEDROCK_SIM_TOOL_INPUT });

    const streamed = await client.send(new ConverseStreamCommand({ modelId: NOVA, messages }));
    const events: ConverseStreamOutput[] = await collect(streamed.stream!);
    assert.equal(events.map((e) => e.contentBlockDelta?.delta?.text ?? '').join(''), BEDROCK_SIM_REPLY);
    assert.equal(events.find((e) => e.messageStop)!.messageStop!.stopReason, 'end_turn');
    assert.deepEqual(events.at(-1)!.metadata!.usage, CONVERSE_SIM_USAGE);

    const toolStream = await collect((await client.send(new ConverseStreamCommand({ modelId: NOVA, messages, toolConfig: { tools } }))).stream!);
    assert.deepEqual(toolStream.find((e) => e.contentBlockStart)!.contentBlockStart!.start!.toolUse, { toolUseId: BEDROCK_SIM_TOOL_USE_ID, name: 'get_weather' });
    const input = toolStream.map((e) => e.contentBlockDelta?.delta?.toolUse?.input ?? '').join('');
    assert.deepEqual(JSON.parse(input), BEDROCK_SIM_TOOL_INPUT);
  });

  test('errors parse into the SDK\'s named exceptions: a wrong secret, a throttled model', async () => {
    const refused = await thrown(() => bedrock('not/the/secret').send(new InvokeModelCommand({ modelId: CLAUDE_BEDROCK, body: claudeBody() })));
    assert.equal((refused as Error).name, 'InvalidSignatureException');
    assert.equal((refused as { $metadata: { httpStatusCode: number } }).$metadata.httpStatusCode, 403);
    const throttled = await thrown(() => bedrock().send(new ConverseCommand({ modelId: 'sim.throttle', messages: [{ role: 'user', content: [{ text: 'hi' }] }] })));
    assert.ok(throttled instanceof ThrottlingException, `ThrottlingException, got ${String(throttled)}`);
    assert.equal(throttled.$metadata.httpStatusCode, 429);
  });
});

/**
 * `google-auth-library` options for a new service-account key of the simulator: the library posts
 * every service-account grant to Google's token URL whatever the key's `token_uri`, so the transport
 * sends it to the key's own (the simulator's) as the gateway does (providers/vertex/auth.ts).
 */
function simGoogleAuthOptions(email: string): GoogleAuthOptions {
  const key = JSON.parse(vertexSim.serviceAccountKey(email)) as { token_uri: string };
  const transporter = new gaxios.Gaxios();
  transporter.interceptors.request.add({
    resolved: (config) => {
      if (String(config.url) === GOOGLE_TOKEN_URL) config.url = new URL(key.token_uri);
      return Promise.resolve(config);
    },
  });
  return { credentials: key as GoogleAuthOptions['credentials'], scopes: ['https://www.googleapis.com/auth/cloud-platform'], clientOptions: { transporter } };
}

describe('the Vertex simulator against the official AnthropicVertex client', () => {
  const vertexClaude = () => new AnthropicVertex({
    baseURL: `${vertexSim.endpoint}/v1`, region: VERTEX_SIM_LOCATION, projectId: VERTEX_SIM_PROJECT, maxRetries: 0,
    googleAuth: new GoogleAuth(simGoogleAuthOptions('anthropic-vertex@sim-project.iam.gserviceaccount.com')),
  });

  test('messages.create at :rawPredict with a token from the simulator', async () => {
    const from = vertexSim.requests.length;
    const message = await vertexClaude().messages.create({ model: CLAUDE_VERTEX, max_tokens: 100, messages: [{ role: 'user', content: 'Say hello' }] });
    assert.deepEqual(message.content, [{ type: 'text', text: VERTEX_SIM_REPLY }]);
    assert.deepEqual(message.usage, VERTEX_CLAUDE_USAGE);
    const sent = vertexSim.requests[from]!;
    assert.equal(sent.path, `/v1/projects/${VERTEX_SIM_PROJECT}/locations/${VERTEX_SIM_LOCATION}/publishers/anthropic/models/${CLAUDE_VERTEX}:rawPredict`);
    assert.match(String(sent.headers.authorization), /^Bearer ya29\.sim-/);
    assert.equal(sent.body!.model, undefined, 'the model goes in the path only');
    assert.ok(VERTEX_ANTHROPIC_VERSIONS.includes(String(sent.body!.anthropic_version)), `a version Vertex accepts: ${String(sent.body!.anthropic_version)}`);
    assert.equal(vertexSim.tokenRequests.get('anthropic-vertex@sim-project.iam.gserviceaccount.com'), 1);
  });

  test('messages.stream at :streamRawPredict: text and usage', async () => {
    const from = vertexSim.requests.length;
    const stream = vertexClaude().messages.stream({ model: CLAUDE_VERTEX, max_tokens: 100, messages: [{ role: 'user', content: 'Say hello' }] });
    const pieces: string[] = [];
    stream.on('text', (text) => pieces.push(text));
    const final = await stream.finalMessage();
    assert.deepEqual(pieces, VERTEX_SIM_PIECES);
    assert.deepEqual(final.content, [{ type: 'text', text: VERTEX_SIM_REPLY }]);
    assert.equal(final.usage.output_tokens, VERTEX_CLAUDE_USAGE.output_tokens);
    assert.equal(final.usage.input_tokens, VERTEX_CLAUDE_USAGE.input_tokens);
    assert.match(vertexSim.requests[from]!.path, /:streamRawPredict$/);
  });
});

describe('the Vertex simulator against the official @google/genai client in Vertex mode', () => {
  const genai = () => new GoogleGenAI({
    vertexai: true, project: VERTEX_SIM_PROJECT, location: VERTEX_SIM_LOCATION,
    httpOptions: { baseUrl: vertexSim.endpoint }, googleAuthOptions: simGoogleAuthOptions('genai@sim-project.iam.gserviceaccount.com'),
  });

  test('generateContent and generateContentStream: text and usage', async () => {
    const ai = genai();
    const from = vertexSim.requests.length;
    const answer = await ai.models.generateContent({ model: GEMINI, contents: 'Say hello' });
    assert.equal(answer.text, VERTEX_SIM_REPLY);
    assert.deepEqual(answer.usageMetadata, VERTEX_GEMINI_USAGE);
    const chunks = await collect(await ai.models.generateContentStream({ model: GEMINI, contents: 'Say hello' }));
    assert.deepEqual(chunks.map((c) => c.text), VERTEX_SIM_PIECES);
    assert.deepEqual(chunks.at(-1)!.usageMetadata, VERTEX_GEMINI_USAGE);
    const paths = vertexSim.requests.slice(from).map((r) => r.path);
    const base = `/v1beta1/projects/${VERTEX_SIM_PROJECT}/locations/${VERTEX_SIM_LOCATION}/publishers/google/models/${GEMINI}`;
    assert.deepEqual(paths, [`${base}:generateContent`, `${base}:streamGenerateContent`]);
  });
});
