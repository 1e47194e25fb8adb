/**
 * AWS Bedrock on 127.0.0.1, speaking Bedrock's wire format
 * (https://docs.aws.amazon.com/bedrock/latest/APIReference/): runtime `POST /model/{id}/invoke`,
 * `/invoke-with-response-stream` (Claude: Anthropic's message, or AWS's binary event stream of
 * `chunk` events `{"bytes": base64 of one Anthropic stream event}`), `/converse`, `/converse-stream`
 * (event stream of `messageStart` … `metadata`), and control-plane `GET /foundation-models` and
 * `GET /inference-profiles` (`ListInferenceProfiles`, in pages joined by `nextToken`). Event
 * streams are encoded with `@smithy/eventstream-codec`, as AWS frames them.
 *
 * Every call must carry a SigV4 `Authorization` for service `bedrock` and `SIM_REGION` by a key of
 * `keys`: the simulator recomputes it with `@smithy/signature-v4` from the headers the request
 * names as signed, its `x-amz-date` and the known secret, and answers 403
 * `UnrecognizedClientException` for an unknown key, `InvalidSignatureException` for a wrong one.
 *
 * Converse offered tools (`toolConfig.tools`) calls the first one with `BEDROCK_SIM_TOOL_INPUT`
 * (`toolUse`, stop reason `tool_use`) unless the last turn carries a `toolResult`; then it answers
 * `BEDROCK_SIM_TOOL_ANSWER`. A stream sends the call as `contentBlockStart.start.toolUse` and its input
 * JSON in two `contentBlockDelta.delta.toolUse.input` pieces, as Bedrock does.
 *
 * Misbehaviour, by model id: `sim.throttle` answers 429 `ThrottlingException`, `sim.denied` 403
 * `AccessDeniedException`, `sim.stream-throttled` a Claude stream that throws a
 * `throttlingException` after its first text; `fail` makes the next N calls answer 429.
 *
 * Started with `agent`, a Claude model plays the scripted coding agent (sim-agent.ts) as the
 * Anthropic simulator does for Claude Code: the same message, or the same stream events each wrapped
 * in a `chunk`, the last one carrying `amazon-bedrock-invocationMetrics` (usage: the Anthropic
 * simulator's `SIM_USAGE`). Requests without the agent's tools get the ordinary reply.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SignatureV4 } from '@smithy/signature-v4';
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { Sha256 } from '../../plugins/provider-router/providers/bedrock/auth.ts';
import { agentReply, SIM_USAGE as AGENT_USAGE } from './anthropic-simulator.ts';
import type { SimAgent } from './sim-agent.ts';
import { readSimRequest, type RecordedRequest, closeServer } from './sim-http.ts';

export const SIM_REGION = 'us-east-1';
export const BEDROCK_SIM_KEYS = { accessKeyId: 'AKIASIMULATOR0000001', secretAccessKey: 'sim/secret+key/0000000000000000000000001' };
export const BEDROCK_SIM_REPLY = 'Hello from Bedrock!';
export const BEDROCK_SIM_PIECES = ['Hello', ' from', ' Bedrock!'];
/** Claude usage the simulator reports (cache reads and writes included). */
export const CLAUDE_SIM_USAGE = { input_tokens: 12, output_tokens: 7, cache_read_input_tokens: 100, cache_creation_input_tokens: 20 };
export const BEDROCK_SIM_TOOL_INPUT = { city: 'Paris' };
export const BEDROCK_SIM_TOOL_USE_ID = 'tooluse_sim_0001';
export const BEDROCK_SIM_TOOL_ANSWER = 'It is 18 °C in Paris.';
export const CONVERSE_SIM_USAGE = { inputTokens: 9, outputTokens: 5, totalTokens: 14 };

export interface BedrockSimulatorOptions {
  /** Claude models play a scripted coding agent (sim-agent.ts). */
  agent?: SimAgent;
}

export interface BedrockSimulator {
  readonly endpoint: string;
  readonly requests: RecordedRequest[];
  /** accessKeyId → secret the simulator accepts. */
  readonly keys: Map<string, string>;
  /** Access key ids whose session has ended: a call they sign answers 403 `ExpiredTokenException`. */
  readonly expired: Set<string>;
  /** Access key ids whose principal may not call `ListInferenceProfiles`: 403 `AccessDeniedException`. */
  readonly profileListDenied: Set<string>;
  /** Requests refused for their signature. */
  signatureFailures: number;
  /** The next `count` model calls answer 429 `ThrottlingException`. */
  fail(count: number): void;
  close(): Promise<void>;
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

function eventMessage(eventType: string, payload: unknown): Uint8Array {
  return codec.encode({
    headers: {
      ':event-type': { type: 'string', value: eventType },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: fromUtf8(JSON.stringify(payload)),
  });
}

function exceptionMessage(exceptionType: string, message: string): Uint8Array {
  return codec.encode({
    headers: {
      ':exception-type': { type: 'string', value: exceptionType },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'exception' },
    },
    body: fromUtf8(JSON.stringify({ message })),
  });
}

const claudeChunk = (event: Record<string, unknown>) => eventMessage('chunk', { bytes: Buffer.from(JSON.stringify(event)).toString('base64'), p: 'abcdefgh' });

function claudeMessage(model: string) {
  return {
    id: 'msg_bdrk_01SIM', type: 'message', role: 'assistant', model: 'claude-sonnet-4-6',
    content: [{ type: 'text', text: BEDROCK_SIM_REPLY }], stop_reason: 'end_turn', stop_sequence: null, usage: CLAUDE_SIM_USAGE, _requested: model,
  };
}

function claudeStream(throttled: boolean): Uint8Array[] {
  const { output_tokens: _out, ...startUsage } = CLAUDE_SIM_USAGE;
  const out = [
    claudeChunk({ type: 'message_start', message: { id: 'msg_bdrk_01SIM', type: 'message', role: 'assistant', model: 'claude-sonnet-4-6', content: [], stop_reason: null, stop_sequence: null, usage: { ...startUsage, output_tokens: 1 } } }),
    claudeChunk({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
  ];
  for (const [i, piece] of BEDROCK_SIM_PIECES.entries()) {
    out.push(claudeChunk({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: piece } }));
    if (throttled && i === 0) return [...out, exceptionMessage('throttlingException', 'Too many tokens, please wait before trying again.')];
  }
  out.push(
    claudeChunk({ type: 'content_block_stop', index: 0 }),
    claudeChunk({ type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: CLAUDE_SIM_USAGE.output_tokens } }),
    claudeChunk({
      type: 'message_stop',
      'amazon-bedrock-invocationMetrics': { inputTokenCount: 12, outputTokenCount: 7, invocationLatency: 500, firstByteLatency: 100, cacheReadInputTokenCount: 100, cacheWriteInputTokenCount: 20 },
    }),
  );
  return out;
}

type Json = Record<string, unknown>;

/** The tool a Converse body's answer calls (see the module doc), or null when it answers text. */
function converseToolCall(body: Json): { toolUseId: string; name: string; input: unknown } | null {
  const tools = ((body.toolConfig as Json | undefined)?.tools ?? []) as Array<{ toolSpec?: { name?: string } }>;
  const messages = (body.messages ?? []) as Array<{ content?: Json[] }>;
  if (tools.length === 0 || (messages.at(-1)?.content ?? []).some((block) => block.toolResult)) return null;
  return { toolUseId: BEDROCK_SIM_TOOL_USE_ID, name: String(tools[0]!.toolSpec?.name), input: BEDROCK_SIM_TOOL_INPUT };
}

/** Converse's non-streamed answer to `body`. */
function converseAnswer(body: Json): Json {
  const call = converseToolCall(body);
  const toolResult = !call && ((body.toolConfig as Json | undefined)?.tools as unknown[] | undefined)?.length;
  const content = call ? [{ toolUse: call }] : [{ text: toolResult ? BEDROCK_SIM_TOOL_ANSWER : BEDROCK_SIM_REPLY }];
  return { output: { message: { role: 'assistant', content } }, stopReason: call ? 'tool_use' : 'end_turn', usage: CONVERSE_SIM_USAGE, metrics: { latencyMs: 100 } };
}

function converseToolStream(call: { toolUseId: string; name: string; input: unknown }): Uint8Array[] {
  const json = JSON.stringify(call.input);
  return [
    eventMessage('messageStart', { role: 'assistant' }),
    eventMessage('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId: call.toolUseId, name: call.name } } }),
    eventMessage('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: json.slice(0, 5) } } }),
    eventMessage('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: json.slice(5) } } }),
    eventMessage('contentBlockStop', { contentBlockIndex: 0 }),
    eventMessage('messageStop', { stopReason: 'tool_use' }),
    eventMessage('metadata', { usage: CONVERSE_SIM_USAGE, metrics: { latencyMs: 100 } }),
  ];
}

function converseStream(body: Json): Uint8Array[] {
  const call = converseToolCall(body);
  if (call) return converseToolStream(call);
  const answer = (converseAnswer(body).output as { message: { content: Array<{ text: string }> } }).message.content[0]!.text;
  const pieces = answer === BEDROCK_SIM_REPLY ? BEDROCK_SIM_PIECES : [answer];
  return [
    eventMessage('messageStart', { role: 'assistant' }),
    ...pieces.map((text) => eventMessage('contentBlockDelta', { contentBlockIndex: 0, delta: { text } })),
    eventMessage('contentBlockStop', { contentBlockIndex: 0 }),
    eventMessage('messageStop', { stopReason: 'end_turn' }),
    eventMessage('metadata', { usage: CONVERSE_SIM_USAGE, metrics: { latencyMs: 100 } }),
  ];
}

/** The agent's turn as Bedrock sends it: Anthropic's message, or its events in `chunk`s; null when the body offers none of its tools. */
function agentAnswer(agent: SimAgent, model: string, body: Record<string, unknown>): { message: unknown; events: Uint8Array[] } | null {
  const reply = agentReply(agent, { ...body, model: model.replace(/^.*anthropic\./, '') });
  if (!reply) return null;
  const metrics = {
    inputTokenCount: AGENT_USAGE.input_tokens, outputTokenCount: AGENT_USAGE.output_tokens, invocationLatency: 500, firstByteLatency: 100,
    cacheReadInputTokenCount: AGENT_USAGE.cache_read_input_tokens, cacheWriteInputTokenCount: AGENT_USAGE.cache_creation_input_tokens,
  };
  const events = reply.events.map((event) => claudeChunk(event.type === 'message_stop' ? { ...event, 'amazon-bedrock-invocationMetrics': metrics } : event));
  return { message: reply.message, events };
}

const FOUNDATION_MODELS = {
  modelSummaries: [
    { modelId: 'anthropic.claude-sonnet-4-6-v1:0', modelName: 'Claude Sonnet 4.6', providerName: 'Anthropic', outputModalities: ['TEXT'] },
    { modelId: 'amazon.nova-pro-v1:0', modelName: 'Nova Pro', providerName: 'Amazon', outputModalities: ['TEXT'] },
  ],
};

const arnOf = (region: string, modelId: string) => `arn:aws:bedrock:${region}::foundation-model/${modelId}`;

/** A system-defined cross-region inference profile as `ListInferenceProfiles` describes it. */
function systemProfile(id: string, name: string, modelId: string, regions: string[], status = 'ACTIVE') {
  return {
    inferenceProfileName: name, description: `Routes requests to ${name.replace(/^\S+ /, '')} in ${regions.join(', ')}.`,
    createdAt: '2025-08-05T00:00:00+00:00', updatedAt: '2025-08-05T00:00:00+00:00',
    inferenceProfileArn: `arn:aws:bedrock:${SIM_REGION}:111122223333:inference-profile/${id}`,
    models: regions.map((region) => ({ modelArn: arnOf(region, modelId) })),
    inferenceProfileId: id, status, type: 'SYSTEM_DEFINED',
  };
}

/**
 * `ListInferenceProfiles`' profiles, served `INFERENCE_PROFILES_PER_PAGE` a page so that a client
 * must follow `nextToken`: two Claude profiles, a Nova one, an embedding model's (not a text model)
 * and an inactive one.
 */
export const INFERENCE_PROFILES = [
  systemProfile('us.anthropic.claude-sonnet-4-6-v1:0', 'US Anthropic Claude Sonnet 4.6', 'anthropic.claude-sonnet-4-6-v1:0', ['us-east-1', 'us-east-2', 'us-west-2']),
  systemProfile('global.anthropic.claude-sonnet-4-6-v1:0', 'Global Anthropic Claude Sonnet 4.6', 'anthropic.claude-sonnet-4-6-v1:0', ['us-east-1', 'eu-west-1', 'ap-northeast-1']),
  systemProfile('us.amazon.nova-pro-v1:0', 'US Nova Pro', 'amazon.nova-pro-v1:0', ['us-east-1', 'us-west-2']),
  systemProfile('us.cohere.embed-v4:0', 'US Cohere Embed v4', 'cohere.embed-v4:0', ['us-east-1', 'us-west-2']),
  systemProfile('eu.amazon.nova-pro-v1:0', 'EU Nova Pro', 'amazon.nova-pro-v1:0', ['eu-west-1'], 'INACTIVE'),
];
export const INFERENCE_PROFILES_PER_PAGE = 2;

/** One page of `ListInferenceProfiles`: `nextToken` is the next page's offset, opaque to clients. */
function inferenceProfilePage(query: Record<string, string>): { inferenceProfileSummaries: unknown[]; nextToken?: string } {
  const start = query.nextToken ? Number(Buffer.from(query.nextToken, 'base64url').toString()) : 0;
  const size = Math.min(INFERENCE_PROFILES_PER_PAGE, Number(query.maxResults ?? 1000));
  const end = start + size;
  const page: { inferenceProfileSummaries: unknown[]; nextToken?: string } = { inferenceProfileSummaries: INFERENCE_PROFILES.slice(start, end) };
  if (end < INFERENCE_PROFILES.length) page.nextToken = Buffer.from(String(end)).toString('base64url');
  return page;
}

/** The request's SigV4 signature checked against the known secret: null when valid, else the error type. */
async function checkSignature(req: RecordedRequest & { rawPath: string }, keys: Map<string, string>, host: string): Promise<string | null> {
  const auth = String(req.headers.authorization ?? '');
  const match = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/.exec(auth);
  if (!match) return 'IncompleteSignatureException';
  const [, accessKeyId, , region, service, signedHeaders] = match;
  const secret = keys.get(accessKeyId!);
  if (!secret) return 'UnrecognizedClientException';
  if (region !== SIM_REGION || service !== 'bedrock') return 'InvalidSignatureException';
  const headers: Record<string, string> = {};
  for (const name of signedHeaders!.split(';')) headers[name] = name === 'host' ? host : String(req.headers[name] ?? '');
  const amzDate = String(req.headers['x-amz-date'] ?? '');
  const signingDate = new Date(`${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`);
  const token = req.headers['x-amz-security-token'];
  const signer = new SignatureV4({
    service: 'bedrock', region: SIM_REGION, sha256: Sha256,
    credentials: { accessKeyId: accessKeyId!, secretAccessKey: secret, ...(typeof token === 'string' ? { sessionToken: token } : {}) },
  });
  const [hostname, port] = host.split(':');
  const signed = await signer.sign(
    { method: req.method, protocol: 'http:', hostname: hostname!, port: Number(port), path: req.rawPath, query: req.query, headers, body: req.rawBody || undefined },
    { signingDate },
  );
  return signed.headers.authorization === auth ? null : 'InvalidSignatureException';
}

export async function startBedrockSimulator(options: BedrockSimulatorOptions = {}): Promise<BedrockSimulator> {
  const requests: RecordedRequest[] = [];
  const keys = new Map([[BEDROCK_SIM_KEYS.accessKeyId, BEDROCK_SIM_KEYS.secretAccessKey]]);
  let failures = 0;
  const sim: BedrockSimulator = {
    endpoint: '', requests, keys, expired: new Set(), profileListDenied: new Set(), signatureFailures: 0,
    fail(count) {
      failures = count;
    },
    close: () => closeServer(server),
  };
  const sendError = (res: import('node:http').ServerResponse, status: number, type: string, message: string) => {
    res.writeHead(status, { 'content-type': 'application/json', 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`, 'x-amzn-requestid': 'req-sim-0001' });
    res.end(JSON.stringify({ message }));
  };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const { request } = await readSimRequest(req);
      const rawPath = (req.url ?? '/').split('?')[0]!;
      const recorded = Object.assign(request, { rawPath });
      requests.push(recorded);
      const refused = await checkSignature(recorded, keys, String(req.headers.host));
      const keyId = /Credential=([^/]+)\//.exec(String(req.headers.authorization ?? ''))?.[1] ?? '';
      if (!refused && sim.expired.has(keyId)) return sendError(res, 403, 'ExpiredTokenException', 'The security token included in the request is expired');
      if (refused) {
        sim.signatureFailures++;
        sendError(res, 403, refused, refused === 'UnrecognizedClientException' ? 'The security token included in the request is invalid.' : 'The request signature we calculated does not match the signature you provided.');
        return;
      }
      if (req.method === 'GET' && request.path === '/foundation-models') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(FOUNDATION_MODELS));
        return;
      }
      if (req.method === 'GET' && request.path === '/inference-profiles') {
        if (sim.profileListDenied.has(keyId)) {
          return sendError(res, 403, 'AccessDeniedException', `User: arn:aws:iam::111122223333:user/sim is not authorized to perform: bedrock:ListInferenceProfiles`);
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(inferenceProfilePage(request.query)));
        return;
      }
      const route = /^\/model\/([^/]+)\/(invoke|invoke-with-response-stream|converse|converse-stream)$/.exec(request.path);
      if (req.method !== 'POST' || !route) return sendError(res, 404, 'UnknownOperationException', 'Unknown operation');
      const model = decodeURIComponent(route[1]!);
      if (failures > 0 || model === 'sim.throttle' || model.includes('claude-sim-throttle')) {
        failures = Math.max(0, failures - 1);
        return sendError(res, 429, 'ThrottlingException', 'Too many requests, please wait before trying again.');
      }
      if (model === 'sim.denied') return sendError(res, 403, 'AccessDeniedException', 'You don\'t have access to the model with the specified model ID.');
      const claude = model.includes('anthropic.claude');
      if (route[2]!.startsWith('invoke') && (!claude || request.body?.anthropic_version !== 'bedrock-2023-05-31')) {
        return sendError(res, 400, 'ValidationException', 'Malformed input request: anthropic_version is required.');
      }
      const scripted = options.agent && route[2]!.startsWith('invoke') ? agentAnswer(options.agent, model, request.body ?? {}) : null;
      if (route[2] === 'invoke') {
        res.writeHead(200, { 'content-type': 'application/json', 'x-amzn-bedrock-input-token-count': '12', 'x-amzn-bedrock-output-token-count': '7' });
        res.end(JSON.stringify(scripted?.message ?? claudeMessage(model)));
        return;
      }
      if (route[2] === 'converse') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(converseAnswer(request.body ?? {})));
        return;
      }
      const messages = route[2] === 'converse-stream' ? converseStream(request.body ?? {}) : scripted?.events ?? claudeStream(model.includes('stream-throttled'));
      res.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream' });
      // Each message split in two writes: the gateway must join messages cut across reads.
      for (const message of messages) {
        const half = Math.floor(message.length / 2);
        res.write(message.subarray(0, half));
        res.write(message.subarray(half));
      }
      res.end();
    })().catch((err: unknown) => {
      res.writeHead(500);
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  Object.assign(sim, { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  return sim;
}
