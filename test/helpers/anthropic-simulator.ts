/**
 * An Anthropic Messages API upstream on 127.0.0.1, speaking the documented wire format
 * (docs/provider-wire-formats.md §2; https://platform.claude.com/docs/en/api/messages ,
 * https://platform.claude.com/docs/en/build-with-claude/streaming , https://platform.claude.com/docs/en/api/errors):
 * `x-api-key` + `anthropic-version` required; bodies validated as strictly as the real API (required
 * `max_tokens`, alternating roles, non-empty text, `tool_result` matching the previous `tool_use`,
 * temperature 0..1, unknown fields refused); `message` answers with cache usage; named-event SSE with
 * `ping`, cumulative `message_delta` usage and `message_stop`; errors as
 * `{"type":"error","error":{"type","message"},"request_id"}` with `request-id`, `retry-after` and
 * `anthropic-ratelimit-*` headers; `GET /v1/models` cursor-paged with `after_id` / `limit`.
 *
 * It misbehaves on request, chosen by the request's model:
 * - `sim-tool`: calls the first tool twice (Paris, London); once the last user turn carries
 *   `tool_result`s it answers `SIM_TOOL_ANSWER`
 * - `sim-thinking`: a thinking block before the text; `sim-length` / `sim-refusal`: that stop reason
 * - `sim-429` (rate limit, `retry-after: 7`), `sim-spend` (429 monthly spend cap, no retry-after),
 *   `sim-500`, `sim-overloaded` (529), `sim-404`, `sim-401`, `sim-403`
 * - `sim-mid-error`: streams two deltas then an `error` event (`overloaded_error`)
 * - `sim-reset`: resets the socket (streams: after the first delta)
 * - `sim-malformed`: a body / event that is not JSON
 * - `sim-truncated`: the stream ends after a delta, with no `message_delta`
 * - `sim-no-stop`: the stream ends after `message_delta`, without `message_stop`
 * `POST /v1/messages/count_tokens` answers `{"input_tokens": SIM_COUNT_TOKENS}` after the same
 * validation (without `max_tokens`) and the same chosen errors (`sim-403`, `sim-401`, ...: the real
 * endpoint refuses a model or a key as `/v1/messages` does); `thinking` blocks replayed in assistant
 * turns need their `signature`.
 * Set `failModels` to make `GET /v1/models` answer 500.
 *
 * Started with `agent` it plays a scripted coding agent whatever the model (sim-agent.ts): offered a
 * tool it knows (`Write`, else `Bash`, Codex's `exec_command`, `shell`) it answers one `tool_use` of
 * it (stop `tool_use`), and once the last user turn carries the `tool_result` it answers
 * `agent.answer`; message and tool ids are unique per answer.
 * For Claude Code: with an `anthropic-beta` of `per-turn-control-*`, `role: "system"` text turns are
 * accepted between the others (Claude Code sends them with that beta to models it thinks support it,
 * and retries without both when refused). Everything else it sends already passes: `cache_control` on
 * blocks, tools and system blocks, `thinking` (`enabled` / `adaptive`), `metadata`,
 * `context_management`, `output_config`, tools' `defer_loading`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readSimRequest, type RecordedRequest, closeServer } from './sim-http.ts';
import { agentToolCall, type SimAgent } from './sim-agent.ts';

export interface SimModel { id: string; display_name: string; created_at: string }

export interface AnthropicSimulatorOptions {
  models?: SimModel[];
  /** Largest page the model list serves, whatever `limit` asks (clients must follow `has_more`). */
  modelPageSize?: number;
  /** Plays a scripted coding agent, whatever the model (sim-agent.ts). */
  agent?: SimAgent;
}

export type { RecordedRequest } from './sim-http.ts';

export interface AnthropicSimulator {
  readonly origin: string;
  /** What ANTHROPIC_BASE_URL should be (no `/v1`). */
  readonly baseUrl: string;
  readonly requests: RecordedRequest[];
  /** The last `POST /v1/messages`. */
  lastMessages(): RecordedRequest;
  /** When true, `GET /v1/models` answers 500 `api_error`. */
  failModels: boolean;
  close(): Promise<void>;
}

export const SIM_REPLY = 'Hello from the Anthropic simulator.';
export const SIM_PIECES = ['Hello', ' from', ' the', ' Anthropic', ' simulator.'];
export const SIM_TOOL_TEXT = 'Let me check.';
export const SIM_TOOL_ANSWER = 'Paris: 18 °C, London: 14 °C.';
/** Anthropic usage of every answer: input excludes the 5 cache reads and 3 cache writes. */
export const SIM_USAGE = { input_tokens: 12, cache_creation_input_tokens: 3, cache_read_input_tokens: 5, output_tokens: 9 };

/** What `count_tokens` answers. */
export const SIM_COUNT_TOKENS = 42;

export const SIM_MODELS: SimModel[] = [
  { id: 'claude-opus-4-1-20250805', display_name: 'Claude Opus 4.1', created_at: '2025-08-05T00:00:00Z' },
  { id: 'claude-sonnet-4-5-20250929', display_name: 'Claude Sonnet 4.5', created_at: '2025-09-29T00:00:00Z' },
  { id: 'claude-haiku-4-5-20251001', display_name: 'Claude Haiku 4.5', created_at: '2025-10-01T00:00:00Z' },
  { id: 'claude-3-7-sonnet-20250219', display_name: 'Claude Sonnet 3.7', created_at: '2025-02-24T00:00:00Z' },
  { id: 'claude-3-5-haiku-20241022', display_name: 'Claude Haiku 3.5', created_at: '2024-10-22T00:00:00Z' },
];

const TOP_LEVEL_FIELDS = new Set([
  'model', 'messages', 'max_tokens', 'system', 'temperature', 'top_p', 'top_k', 'stop_sequences', 'stream',
  'tools', 'tool_choice', 'metadata', 'thinking', 'service_tier', 'container', 'mcp_servers', 'context_management', 'output_config',
]);
const IMAGE_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

type Json = Record<string, unknown>;
type Block = Json & { type: string };

let requestCounter = 0;
const requestId = () => `req_sim_${String(++requestCounter).padStart(6, '0')}`;

function sendError(res: ServerResponse, status: number, type: string, message: string, headers: Record<string, string> = {}, details?: Json) {
  const id = requestId();
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': id, ...headers });
  res.end(JSON.stringify({ type: 'error', error: { type, message, ...(details ? { details } : {}) }, request_id: id }));
}

const event = (name: string, data: Json) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;

// ----- request validation (messages in the real API's words)

function validateBlock(block: Block, where: string, role: string): string | null {
  switch (block.type) {
    case 'text':
      if (typeof block.text !== 'string') return `${where}.text: Field required`;
      return block.text.trim() === '' ? `${where}: text content blocks must contain non-whitespace text` : null;
    case 'image': {
      if (role !== 'user') return `${where}: image blocks are only allowed in user messages`;
      const source = block.source as Json | undefined;
      if (source?.type === 'url') return typeof source.url === 'string' && /^https?:\/\//.test(source.url) ? null : `${where}.source.url: invalid URL`;
      if (source?.type !== 'base64' || typeof source.data !== 'string') return `${where}.source: Input tag does not match any of the expected tags: 'base64', 'url'`;
      return IMAGE_TYPES.has(String(source.media_type)) ? null : `${where}.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'`;
    }
    case 'tool_use':
      if (role !== 'assistant') return `${where}: tool_use blocks are only allowed in assistant messages`;
      return typeof block.id === 'string' && typeof block.name === 'string' && block.input && typeof block.input === 'object' ? null : `${where}: tool_use needs id, name and an input object`;
    case 'tool_result':
      if (role !== 'user') return `${where}: tool_result blocks are only allowed in user messages`;
      return typeof block.tool_use_id === 'string' ? null : `${where}.tool_use_id: Field required`;
    case 'thinking':
      // Replayed thinking must carry the signature the API issued with it.
      if (role !== 'assistant') return `${where}: thinking blocks are only allowed in assistant messages`;
      return typeof block.signature === 'string' && block.signature !== '' ? null : `${where}.signature: Field required`;
    case 'redacted_thinking':
      return role === 'assistant' && typeof block.data === 'string' ? null : `${where}.data: Field required`;
    case 'document':
      return role === 'user' && typeof (block.source as Json | undefined)?.type === 'string' ? null : `${where}.source: Field required`;
    default:
      return `${where}.type: Input tag '${block.type}' does not match any of the expected tags`;
  }
}

function blocksOf(content: unknown): Block[] {
  return typeof content === 'string' ? [{ type: 'text', text: content }] : (content as Block[]);
}

/** Checks that tool_use ids are answered in the next turn and tool_results refer to the previous one. */
function validateToolPairs(messages: Array<{ role: string; content: unknown }>): string | null {
  for (let i = 0; i < messages.length; i++) {
    const uses = blocksOf(messages[i]!.content).filter((b) => b.type === 'tool_use').map((b) => String(b.id));
    const next = messages[i + 1] ? blocksOf(messages[i + 1]!.content) : [];
    const answered = new Set(next.filter((b) => b.type === 'tool_result').map((b) => String(b.tool_use_id)));
    const missing = uses.filter((id) => !answered.has(id));
    if (missing.length > 0 && messages[i + 1]) {
      return `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    }
    const previous = i > 0 ? blocksOf(messages[i - 1]!.content).filter((b) => b.type === 'tool_use').map((b) => String(b.id)) : [];
    for (const result of blocksOf(messages[i]!.content).filter((b) => b.type === 'tool_result')) {
      if (!previous.includes(String(result.tool_use_id))) {
        return `messages.${i}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(result.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
      }
    }
  }
  return null;
}

/**
 * `systemTurns`: the request's `anthropic-beta` has `per-turn-control-*`, with which Claude Code sends
 * `role: "system"` turns of text between the others (and retries without that beta when refused).
 */
function validateMessages(messages: unknown, systemTurns = false): string | null {
  if (!Array.isArray(messages)) return 'messages: Field required';
  if (messages.length === 0) return 'messages: at least one message is required';
  let previousRole = '';
  for (const [i, message] of (messages as Json[]).entries()) {
    const role = String(message.role);
    if (role === 'system' && systemTurns) {
      const blocks = blocksOf(message.content);
      if (!Array.isArray(blocks) || blocks.length === 0 || blocks.some((b) => b.type !== 'text')) return `messages.${i}: system turns hold text blocks`;
      continue;
    }
    if (role !== 'user' && role !== 'assistant') return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    if (role === previousRole) return `messages: roles must alternate between "user" and "assistant", but found multiple "${role}" roles in a row`;
    previousRole = role;
    const content = message.content;
    if (typeof content === 'string') {
      if (content.trim() === '') return `messages.${i}: all messages must have non-empty content`;
      continue;
    }
    if (!Array.isArray(content) || content.length === 0) return `messages.${i}: all messages must have non-empty content`;
    for (const [j, block] of (content as Block[]).entries()) {
      const problem = validateBlock(block, `messages.${i}.content.${j}`, role);
      if (problem) return problem;
    }
  }
  return validateToolPairs((messages as Array<{ role: string; content: unknown }>).filter((m) => m.role !== 'system'));
}

function validateParams(body: Json): string | null {
  for (const field of Object.keys(body)) if (!TOP_LEVEL_FIELDS.has(field)) return `${field}: Extra inputs are not permitted`;
  if (typeof body.model !== 'string') return 'model: Field required';
  if (!Number.isInteger(body.max_tokens) || (body.max_tokens as number) < 1) return 'max_tokens: Field required';
  if (body.temperature !== undefined && !(typeof body.temperature === 'number' && body.temperature >= 0 && body.temperature <= 1)) {
    return 'temperature: Input should be less than or equal to 1';
  }
  if (body.top_p !== undefined && !(typeof body.top_p === 'number' && body.top_p >= 0 && body.top_p <= 1)) return 'top_p: Input should be less than or equal to 1';
  if (body.stop_sequences !== undefined && !(Array.isArray(body.stop_sequences) && body.stop_sequences.every((s) => typeof s === 'string'))) {
    return 'stop_sequences: Input should be a valid list of strings';
  }
  if (body.system !== undefined && typeof body.system !== 'string') {
    if (!Array.isArray(body.system)) return 'system: Input should be a valid string or list';
    for (const [i, block] of (body.system as Block[]).entries()) {
      if (block.type !== 'text' || typeof block.text !== 'string' || block.text === '') return `system.${i}: text content blocks must be non-empty`;
    }
  }
  return validateTools(body);
}

function validateTools(body: Json): string | null {
  const tools = (body.tools ?? []) as Json[];
  for (const [i, tool] of tools.entries()) {
    if (typeof tool.name !== 'string') return `tools.${i}.name: Field required`;
    if ((tool.input_schema as Json | undefined)?.type !== 'object') return `tools.${i}.input_schema.type: Input should be 'object'`;
  }
  const choice = body.tool_choice as Json | undefined;
  if (choice === undefined) return null;
  if (!['auto', 'any', 'tool', 'none'].includes(String(choice.type))) return 'tool_choice.type: Input tag does not match';
  if (choice.type === 'tool' && !tools.some((t) => t.name === choice.name)) return `tool_choice: tool '${String(choice.name)}' not found in tools`;
  return null;
}

// ----- answers

interface Answer { id?: string; blocks: Block[]; stopReason: string }

let agentTurns = 0;

/** The scripted agent's turn (sim-agent.ts), or null when the request offers none of its tools. */
function agentAnswer(agent: SimAgent, body: Json): Answer | null {
  const messages = body.messages as Array<{ role: string; content: unknown }>;
  const call = agentToolCall(agent, ((body.tools ?? []) as Json[]).map((t) => String(t.name)), body);
  if (!call) return null;
  const id = `${++agentTurns}`.padStart(4, '0');
  if (blocksOf(messages.at(-1)!.content).some((b) => b.type === 'tool_result')) {
    return { id: `msg_sim_agent_${id}`, blocks: [{ type: 'text', text: agent.answer }], stopReason: 'end_turn' };
  }
  return { id: `msg_sim_agent_${id}`, blocks: [{ type: 'tool_use', id: `toolu_sim_agent_${id}`, ...call }], stopReason: 'tool_use' };
}

function answerFor(body: Json, agent: SimAgent | undefined): Answer {
  const model = String(body.model);
  const messages = body.messages as Array<{ role: string; content: unknown }>;
  const tools = (body.tools ?? []) as Json[];
  const scripted = agent && agentAnswer(agent, body);
  if (scripted) return scripted;
  if (model === 'sim-tool' && tools.length > 0) {
    const answered = blocksOf(messages.at(-1)!.content).some((b) => b.type === 'tool_result');
    if (answered) return { blocks: [{ type: 'text', text: SIM_TOOL_ANSWER }], stopReason: 'end_turn' };
    const name = String(tools[0]!.name);
    return {
      blocks: [
        { type: 'text', text: SIM_TOOL_TEXT },
        { type: 'tool_use', id: 'toolu_sim_paris', name, input: { city: 'Paris' } },
        { type: 'tool_use', id: 'toolu_sim_london', name, input: { city: 'London' } },
      ],
      stopReason: 'tool_use',
    };
  }
  const text: Block = { type: 'text', text: SIM_REPLY };
  if (model === 'sim-thinking') {
    return { blocks: [{ type: 'thinking', thinking: 'The user wants a greeting.', signature: 'sig_sim' }, text], stopReason: 'end_turn' };
  }
  const stopReason = model === 'sim-length' ? 'max_tokens' : model === 'sim-refusal' ? 'refusal' : 'end_turn';
  return { blocks: [text], stopReason };
}

function messageBody(body: Json, answer: Answer): Json {
  return {
    id: answer.id ?? 'msg_sim_01', type: 'message', role: 'assistant', model: body.model, content: answer.blocks,
    stop_reason: answer.stopReason, stop_sequence: null,
    usage: { ...SIM_USAGE, cache_creation: { ephemeral_5m_input_tokens: 3, ephemeral_1h_input_tokens: 0 }, server_tool_use: null, service_tier: 'standard' },
  };
}

/** The SSE events of one answer, as the real API sends them (one `ping` after the first block start). */
function streamEvents(body: Json, answer: Answer): string[] {
  const { output_tokens: _output, ...inputUsage } = SIM_USAGE;
  const events = [event('message_start', {
    message: { id: answer.id ?? 'msg_sim_01', type: 'message', role: 'assistant', model: body.model, content: [], stop_reason: null, stop_sequence: null, usage: { ...inputUsage, output_tokens: 1 } },
  })];
  answer.blocks.forEach((block, index) => {
    events.push(...blockEvents(block, index));
    if (index === 0) events.splice(2, 0, event('ping', {}));
  });
  events.push(event('message_delta', { delta: { stop_reason: answer.stopReason, stop_sequence: null }, usage: { output_tokens: SIM_USAGE.output_tokens } }));
  events.push(event('message_stop', {}));
  return events;
}

function blockEvents(block: Block, index: number): string[] {
  const out: string[] = [];
  if (block.type === 'text') {
    out.push(event('content_block_start', { index, content_block: { type: 'text', text: '' } }));
    const pieces = block.text === SIM_REPLY ? SIM_PIECES : [String(block.text)];
    for (const text of pieces) out.push(event('content_block_delta', { index, delta: { type: 'text_delta', text } }));
  } else if (block.type === 'tool_use') {
    out.push(event('content_block_start', { index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } }));
    const json = JSON.stringify(block.input);
    for (const partial of ['', json.slice(0, 9), json.slice(9)]) {
      out.push(event('content_block_delta', { index, delta: { type: 'input_json_delta', partial_json: partial } }));
    }
  } else {
    out.push(event('content_block_start', { index, content_block: { type: 'thinking', thinking: '', signature: '' } }));
    out.push(event('content_block_delta', { index, delta: { type: 'thinking_delta', thinking: String(block.thinking) } }));
    out.push(event('content_block_delta', { index, delta: { type: 'signature_delta', signature: String(block.signature) } }));
  }
  out.push(event('content_block_stop', { index }));
  return out;
}

/**
 * The scripted agent's answer (sim-agent.ts) to a Messages body, as Anthropic's message and as its
 * stream events (the `data` objects, in order), or null when the body offers none of the agent's
 * tools: for simulators of clouds that carry Anthropic's shapes in their own framing (Bedrock).
 */
export function agentReply(agent: SimAgent, body: Json): { message: Json; events: Json[] } | null {
  const answer = agentAnswer(agent, body);
  if (!answer) return null;
  const events = streamEvents(body, answer).map((text) => JSON.parse(/^data: (.*)$/m.exec(text)![1]!) as Json);
  return { message: messageBody(body, answer), events };
}

const RATE_LIMIT_HEADERS = {
  'retry-after': '7',
  'anthropic-ratelimit-requests-limit': '50',
  'anthropic-ratelimit-requests-remaining': '0',
  'anthropic-ratelimit-requests-reset': '2026-11-02T10:00:07Z',
};

/** Error answers chosen by model; true when one was sent. */
function sendChosenError(res: ServerResponse, model: string): boolean {
  switch (model) {
    case 'sim-429':
      sendError(res, 429, 'rate_limit_error', 'This request would exceed the rate limit for your organization of 50 requests per minute.', RATE_LIMIT_HEADERS);
      return true;
    case 'sim-spend':
      sendError(res, 429, 'rate_limit_error', 'You have reached your specified API usage limits.', {}, { error_code: 'enforced_spend_limit_reached' });
      return true;
    case 'sim-500':
      sendError(res, 500, 'api_error', 'Internal server error');
      return true;
    case 'sim-overloaded':
      sendError(res, 529, 'overloaded_error', 'Overloaded');
      return true;
    case 'sim-404':
      sendError(res, 404, 'not_found_error', `model: ${model}`);
      return true;
    case 'sim-401':
      sendError(res, 401, 'authentication_error', 'invalid x-api-key');
      return true;
    case 'sim-403':
      sendError(res, 403, 'permission_error', 'Your API key does not have permission to use the specified resource.');
      return true;
  }
  return false;
}

async function streamAnswer(req: IncomingMessage, res: ServerResponse, body: Json, answer: Answer) {
  const model = String(body.model);
  res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'request-id': requestId() });
  let events = streamEvents(body, answer);
  if (model === 'sim-reset') {
    res.write(events.slice(0, 4).join(''));
    await new Promise((resolve) => setTimeout(resolve, 20));
    return req.socket.destroy();
  }
  if (model === 'sim-mid-error') {
    events = [...events.slice(0, 5), `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })}\n\n`];
  } else if (model === 'sim-malformed') {
    events = [events[0]!, 'event: content_block_delta\ndata: {not json}\n\n'];
  } else if (model === 'sim-truncated') {
    events = events.slice(0, 4);
  } else if (model === 'sim-no-stop') {
    events = events.slice(0, -1);
  }
  // One write per event, as the real API flushes them.
  for (const text of events.slice(0, -1)) res.write(text);
  res.end(events.at(-1));
}

function messages(req: IncomingMessage, res: ServerResponse, body: Json | null, agent: SimAgent | undefined) {
  if (req.headers['anthropic-version'] === undefined) return sendError(res, 400, 'invalid_request_error', 'anthropic-version: header is required');
  if (!body) return sendError(res, 400, 'invalid_request_error', 'There was an issue with your request body: it is not valid JSON.');
  const problem = validateParams(body) ?? validateMessages(body.messages, /per-turn-control-/.test(String(req.headers['anthropic-beta'] ?? '')));
  if (problem) return sendError(res, 400, 'invalid_request_error', problem);
  const model = String(body.model);
  if (sendChosenError(res, model)) return;
  const answer = answerFor(body, agent);
  if (body.stream === true) return streamAnswer(req, res, body, answer);
  if (model === 'sim-reset') return req.socket.destroy();
  res.writeHead(200, { 'content-type': 'application/json', 'request-id': requestId() });
  res.end(model === 'sim-malformed' ? '{"id": "msg_sim_01", "content": [' : JSON.stringify(messageBody(body, answer)));
}

function countTokens(req: IncomingMessage, res: ServerResponse, body: Json | null) {
  if (req.headers['anthropic-version'] === undefined) return sendError(res, 400, 'invalid_request_error', 'anthropic-version: header is required');
  if (!body) return sendError(res, 400, 'invalid_request_error', 'There was an issue with your request body: it is not valid JSON.');
  const problem = validateParams({ ...body, max_tokens: 1 }) ?? validateMessages(body.messages);
  if (problem) return sendError(res, 400, 'invalid_request_error', problem);
  if (sendChosenError(res, String(body.model))) return;
  res.writeHead(200, { 'content-type': 'application/json', 'request-id': requestId() });
  res.end(JSON.stringify({ input_tokens: SIM_COUNT_TOKENS }));
}

function listModels(res: ServerResponse, query: Record<string, string>, models: SimModel[], pageSize: number) {
  const limit = Math.min(Number(query.limit ?? 20), pageSize);
  const start = query.after_id ? models.findIndex((m) => m.id === query.after_id) + 1 : 0;
  const page = models.slice(start, start + limit);
  res.writeHead(200, { 'content-type': 'application/json', 'request-id': requestId() });
  res.end(JSON.stringify({
    data: page.map((m) => ({ type: 'model', ...m })),
    has_more: start + limit < models.length,
    first_id: page[0]?.id ?? null,
    last_id: page.at(-1)?.id ?? null,
  }));
}

export async function startAnthropicSimulator(options: AnthropicSimulatorOptions = {}): Promise<AnthropicSimulator> {
  const models = options.models ?? SIM_MODELS;
  const pageSize = options.modelPageSize ?? 1000;
  const requests: RecordedRequest[] = [];
  const state = { failModels: false };

  const server: Server = createServer(async (req, res) => {
    const { request } = await readSimRequest(req);
    requests.push(request);
    const { path, query, body } = request;
    if (typeof req.headers['x-api-key'] !== 'string' || req.headers['x-api-key'] === '') {
      return sendError(res, 401, 'authentication_error', 'x-api-key header is required');
    }
    if (req.method === 'GET' && path === '/v1/models') {
      if (state.failModels) return sendError(res, 500, 'api_error', 'Internal server error');
      return listModels(res, query, models, pageSize);
    }
    if (req.method === 'POST' && path === '/v1/messages') return messages(req, res, body, options.agent);
    if (req.method === 'POST' && path === '/v1/messages/count_tokens') return countTokens(req, res, body);
    sendError(res, 404, 'not_found_error', 'Not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    baseUrl: origin,
    requests,
    lastMessages: () => requests.filter((r) => r.path === '/v1/messages').at(-1)!,
    get failModels() {
      return state.failModels;
    },
    set failModels(value: boolean) {
      state.failModels = value;
    },
    close: () => closeServer(server),
  };
}
