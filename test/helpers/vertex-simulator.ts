/**
 * Google Vertex AI on 127.0.0.1, with its own OAuth token endpoint, speaking Vertex's wire format
 * (https://cloud.google.com/vertex-ai/docs/reference/rest/v1/projects.locations.publishers.models):
 * - `POST /token`: Google's service-account grant (`grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`,
 *   `assertion=<RS256 JWT>`); the assertion's signature is checked with the public key of its `iss`
 *   (registered by `serviceAccountKey`), and a token `{access_token, expires_in, token_type}` issued,
 *   with the key's `expiresInSec`. An unknown issuer or a bad signature: 400 `invalid_grant`.
 * - `POST /v1/projects/{project}/locations/{location}/publishers/anthropic/models/{model}:rawPredict`
 *   and `:streamRawPredict` (Anthropic's message; Anthropic's named-event SSE), requiring an
 *   `anthropic_version` of `VERTEX_ANTHROPIC_VERSIONS` and no `model` in the body.
 * - `.../publishers/google/models/{model}:generateContent` and `:streamGenerateContent?alt=sse`.
 * Model calls are served under `/v1` and `/v1beta1` alike, as Vertex does (`@google/genai` uses
 * `v1beta1` by default in Vertex mode).
 * Every model call must carry `Authorization: Bearer <a token it issued>` (else 401
 * `UNAUTHENTICATED`) and name `VERTEX_SIM_PROJECT` / `VERTEX_SIM_LOCATION`.
 *
 * Started with `agent`, a Claude model plays the scripted coding agent (sim-agent.ts) as the
 * Anthropic simulator does for Claude Code: the same message, or the same named-event SSE; requests
 * without the agent's tools get the ordinary reply.
 *
 * Misbehaviour, by model id: `sim-throttle` (or `claude-sim-throttle`) 429 `RESOURCE_EXHAUSTED` with `RetryInfo` 2s,
 * `sim-denied` 403 `PERMISSION_DENIED`, `sim-missing` 404 `NOT_FOUND`; `fail(n)` makes the next n
 * model calls answer 429 without a `RetryInfo`.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createVerify, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { readSimRequest, type RecordedRequest, closeServer } from './sim-http.ts';
import { agentReply } from './anthropic-simulator.ts';
import type { SimAgent } from './sim-agent.ts';

export const VERTEX_SIM_PROJECT = 'sim-project';
export const VERTEX_SIM_LOCATION = 'us-east5';
/**
 * Body `anthropic_version`s Claude on Vertex accepts: Vertex's own, and the dated API version that
 * `@anthropic-ai/vertex-sdk` 1.x copies into the body from its `anthropic-version` header.
 */
export const VERTEX_ANTHROPIC_VERSIONS: readonly string[] = ['vertex-2023-10-16', '2026-10-21'];
export const VERTEX_SIM_REPLY = 'Hello from Vertex!';
export const VERTEX_SIM_PIECES = ['Hello', ' from', ' Vertex!'];
/** Claude usage the simulator reports (cache reads and writes included). */
export const VERTEX_CLAUDE_USAGE = { input_tokens: 12, output_tokens: 7, cache_read_input_tokens: 100, cache_creation_input_tokens: 20 };
/** Gemini usage the simulator reports. */
export const VERTEX_GEMINI_USAGE = { promptTokenCount: 9, candidatesTokenCount: 5, totalTokenCount: 14 };

export interface VertexSimulatorOptions {
  /** Claude models play a scripted coding agent (sim-agent.ts). */
  agent?: SimAgent;
}

export interface VertexSimulator {
  readonly endpoint: string;
  /** Model calls (token requests are counted in `tokenRequests`). */
  readonly requests: RecordedRequest[];
  /** Token requests answered, by service-account email (refused ones included). */
  readonly tokenRequests: Map<string, number>;
  /** The next `count` model calls answer 429 `RESOURCE_EXHAUSTED`. */
  fail(count: number): void;
  /**
   * A new service-account key (JSON text) whose `token_uri` is this simulator's `/token`; its tokens
   * last `expiresInSec` (default 3600). `registered: false` makes a key the simulator does not know.
   */
  serviceAccountKey(email: string, options?: { expiresInSec?: number; registered?: boolean }): string;
  close(): Promise<void>;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function googleError(res: ServerResponse, code: number, status: string, message: string, details: unknown[] = []): void {
  sendJson(res, code, { error: { code, message, status, details } });
}

const claudeMessage = () => ({
  id: 'msg_vrtx_01SIM', type: 'message', role: 'assistant', model: 'claude-sonnet-4-5-20250929',
  content: [{ type: 'text', text: VERTEX_SIM_REPLY }], stop_reason: 'end_turn', stop_sequence: null, usage: VERTEX_CLAUDE_USAGE,
});

const sseOf = (events: Array<Record<string, unknown>>) => events.map((e) => `event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`).join('');

function claudeStream(): string {
  const { output_tokens: _out, ...startUsage } = VERTEX_CLAUDE_USAGE;
  const events: Array<Record<string, unknown>> = [
    { type: 'message_start', message: { ...claudeMessage(), content: [], stop_reason: null, usage: { ...startUsage, output_tokens: 1 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    ...VERTEX_SIM_PIECES.map((text) => ({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } })),
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: VERTEX_CLAUDE_USAGE.output_tokens } },
    { type: 'message_stop' },
  ];
  return sseOf(events);
}

const geminiAnswer = (text: string, finish: boolean, usage: boolean) => ({
  candidates: [{ content: { role: 'model', parts: [{ text }] }, index: 0, ...(finish ? { finishReason: 'STOP' } : {}) }],
  ...(usage ? { usageMetadata: VERTEX_GEMINI_USAGE } : {}),
  modelVersion: 'gemini-2.5-flash', responseId: 'resp-sim-1',
});

/** `header.payload` signed with RS256 by the public key of the payload's `iss`: the payload, or null. */
function verifyAssertion(assertion: string, keys: Map<string, { publicKey: KeyObject }>): { iss: string; ok: boolean } {
  const [header, payload, signature] = assertion.split('.');
  let claims: { iss?: string; scope?: string } = {};
  try {
    claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString('utf8')) as typeof claims;
  } catch {
    return { iss: '', ok: false };
  }
  const iss = claims.iss ?? '';
  const key = keys.get(iss);
  if (!key || !signature || claims.scope !== 'https://www.googleapis.com/auth/cloud-platform') return { iss, ok: false };
  const ok = createVerify('RSA-SHA256').update(`${header}.${payload}`).verify(key.publicKey, Buffer.from(signature, 'base64url'));
  return { iss, ok };
}

export async function startVertexSimulator(options: VertexSimulatorOptions = {}): Promise<VertexSimulator> {
  const requests: RecordedRequest[] = [];
  const tokenRequests = new Map<string, number>();
  const keys = new Map<string, { publicKey: KeyObject; expiresInSec: number }>();
  const tokens = new Set<string>();
  let failures = 0;
  let issued = 0;
  let endpoint = '';

  const answerToken = (res: ServerResponse, form: URLSearchParams) => {
    const { iss, ok } = verifyAssertion(form.get('assertion') ?? '', keys);
    tokenRequests.set(iss, (tokenRequests.get(iss) ?? 0) + 1);
    if (!ok || form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer') {
      return sendJson(res, 400, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' });
    }
    const token = `ya29.sim-${++issued}`;
    tokens.add(token);
    sendJson(res, 200, { access_token: token, expires_in: keys.get(iss)!.expiresInSec, token_type: 'Bearer' });
  };

  const answerModel = (res: ServerResponse, request: RecordedRequest) => {
    const route = /^\/v1(?:beta1)?\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/(anthropic|google)\/models\/([^/:]+):(\w+)$/.exec(request.path);
    if (!route) return googleError(res, 404, 'NOT_FOUND', `The requested URL ${request.path} was not found on this server.`);
    const [, project, location, publisher, model, method] = route;
    const bearer = /^Bearer (.+)$/.exec(String(request.headers.authorization ?? ''))?.[1];
    if (!bearer || !tokens.has(bearer)) return googleError(res, 401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials. Expected OAuth 2 access token.');
    if (project !== VERTEX_SIM_PROJECT || location !== VERTEX_SIM_LOCATION) return googleError(res, 403, 'PERMISSION_DENIED', `Permission denied on resource project ${project}.`);
    if (failures > 0 || model!.endsWith('sim-throttle')) {
      const retry = failures > 0 ? [] : [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '2s' }];
      failures = Math.max(0, failures - 1);
      return googleError(res, 429, 'RESOURCE_EXHAUSTED', 'Quota exceeded for aiplatform.googleapis.com/online_prediction_requests_per_base_model.', retry);
    }
    if (model === 'sim-denied') return googleError(res, 403, 'PERMISSION_DENIED', 'Permission \'aiplatform.endpoints.predict\' denied on resource.');
    if (model === 'sim-missing') return googleError(res, 404, 'NOT_FOUND', `Publisher Model \`projects/${project}/locations/${location}/publishers/${publisher}/models/${model}\` not found.`);
    if (publisher === 'anthropic') return answerClaude(res, request, model!, method!);
    if (method === 'generateContent') return sendJson(res, 200, geminiAnswer(VERTEX_SIM_REPLY, true, true));
    if (method !== 'streamGenerateContent' || request.query.alt !== 'sse') return googleError(res, 400, 'INVALID_ARGUMENT', `Unknown method ${method}.`);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    VERTEX_SIM_PIECES.forEach((text, i) => {
      const last = i === VERTEX_SIM_PIECES.length - 1;
      res.write(`data: ${JSON.stringify(geminiAnswer(text, last, last))}\r\n\r\n`);
    });
    res.end();
  };

  const answerClaude = (res: ServerResponse, request: RecordedRequest, model: string, method: string) => {
    const body = request.body ?? {};
    if (!VERTEX_ANTHROPIC_VERSIONS.includes(String(body.anthropic_version)) || body.model !== undefined) {
      const message = `anthropic_version (one of ${VERTEX_ANTHROPIC_VERSIONS.join(', ')}) is required and model must not be set.`;
      return sendJson(res, 400, { type: 'error', error: { type: 'invalid_request_error', message } });
    }
    const scripted = options.agent ? agentReply(options.agent, { ...body, model: model.replace(/@.*$/, '') }) : null;
    if (method === 'rawPredict') return sendJson(res, 200, scripted?.message ?? claudeMessage());
    if (method !== 'streamRawPredict' || body.stream !== true) return googleError(res, 400, 'INVALID_ARGUMENT', 'streamRawPredict needs "stream": true.');
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
    res.end(scripted ? sseOf(scripted.events) : claudeStream());
  };

  const server: Server = createServer((req, res) => {
    void (async () => {
      const { request } = await readSimRequest(req);
      if (req.method === 'POST' && request.path === '/token') return answerToken(res, new URLSearchParams(request.rawBody));
      requests.push(request);
      if (req.method !== 'POST') return googleError(res, 404, 'NOT_FOUND', 'Not found.');
      answerModel(res, request);
    })().catch((err: unknown) => {
      res.writeHead(500);
      res.end(String(err));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    endpoint, requests, tokenRequests,
    fail(count) {
      failures = count;
    },
    serviceAccountKey(email, { expiresInSec = 3600, registered = true } = {}) {
      const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      if (registered) keys.set(email, { publicKey, expiresInSec });
      return JSON.stringify({
        type: 'service_account', project_id: VERTEX_SIM_PROJECT, private_key_id: `key-${email}`,
        private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }), client_email: email, client_id: '100000000000000000001',
        token_uri: `${endpoint}/token`,
      });
    },
    close: () => closeServer(server),
  };
}
