/**
 * Anthropic request mapping: the canonical (OpenAI) chat request → the `POST /v1/messages` body.
 *
 * Sources (docs/provider-wire-formats.md §2.2):
 * - Messages: https://platform.claude.com/docs/en/api/messages (request fields, content blocks)
 * - Tool use: https://platform.claude.com/docs/en/agents-and-tools/tool-use/overview (`tools` with
 *   `input_schema`, `tool_choice` auto/any/tool/none + `disable_parallel_tool_use`, `tool_use` /
 *   `tool_result` blocks)
 * - Vision: https://platform.claude.com/docs/en/build-with-claude/vision (base64 and `url` image sources;
 *   jpeg, png, gif, webp)
 * - Prompt caching: https://platform.claude.com/docs/en/build-with-claude/prompt-caching (`cache_control`)
 *
 * Request fields (every top-level field gets a decision in `REQUEST_FIELDS`; anything else is
 * refused with a 400 naming it, as OpenAI itself refuses unrecognized arguments):
 * - mapped: `model`; `messages` (system/developer → top-level `system` text blocks; user/assistant
 *   turns; `tool_calls` → `tool_use`; tool messages → user `tool_result` blocks; consecutive same-role
 *   turns merged because Anthropic roles alternate); `max_completion_tokens` ?? `max_tokens` →
 *   `max_tokens` (required by Anthropic: `DEFAULT_MAX_TOKENS` when the client sends none);
 *   `temperature` (clamped to Anthropic's 0..1); `top_p`; `top_k` (Anthropic's own, accepted as an
 *   extension); `stop` → `stop_sequences`; `tools`, `tool_choice`, `parallel_tool_calls: false` →
 *   `disable_parallel_tool_use`; `safety_identifier` ?? `user` → `metadata.user_id`; `stream`;
 *   `response_format` `{type:"text"}` (the default, so nothing is sent).
 * - dropped, with the reason in `REQUEST_FIELDS`: `stream_options`, `store`, `metadata`,
 *   `service_tier`, `seed`, `prompt_cache_key`, `prompt_cache_retention`, and no-op values of the
 *   refused ones (`n: 1`, penalties of 0, `logprobs: false`, empty `logit_bias`, `modalities: ["text"]`).
 * - refused (400 naming the parameter): `n` > 1, `logprobs`, `top_logprobs`, `logit_bias`,
 *   non-zero `presence_penalty` / `frequency_penalty`, `response_format` json_object / json_schema
 *   (no JSON mode on every Messages model), `reasoning_effort` (extended thinking has constraints on
 *   `max_tokens` and `temperature` the client did not agree to), `verbosity`, `audio`, non-text
 *   `modalities`, `prediction`, `web_search_options`, `functions` / `function_call`.
 * - inside messages: `name` is dropped (Anthropic turns carry no author name); assistant `refusal`
 *   is dropped (it is not part of the conversation); image `detail` is dropped (no equivalent);
 *   `cache_control` on text / image parts is forwarded (prompt caching, as OpenRouter clients send it);
 *   audio / file parts, images outside user turns, and the deprecated `function` role are refused.
 *   Empty turns are left out (Anthropic refuses empty content). A trailing assistant message is sent
 *   as is: Anthropic continues it (prefill) instead of answering after it.
 */
import type { ChatCompletionRequest, ChatContentPart, ChatMessage, ChatTool, ChatToolCall } from '../../../../core/canonical/chat-types.ts';
import { invalidRequest } from '../../../../core/errors.ts';
import { contentParts, contentText, maxOutputTokens, parseDataUrl, parseToolArguments, unsupportedParameter } from '../canonical.ts';

/** `max_tokens` sent when the client gives no cap (Anthropic requires one; every current model allows it). */
export const DEFAULT_MAX_TOKENS = 4096;
/** Anthropic's `temperature` range is 0..1; OpenAI's is 0..2. */
const MAX_TEMPERATURE = 1;
/** Image media types the Messages API accepts in base64 sources. */
const IMAGE_MEDIA_TYPES = new Set(['image/jpeg', 'image/png', 'image/gif', 'image/webp']);

// Anthropic request shapes (only what the gateway writes)

interface CacheControl { type: 'ephemeral'; ttl?: string }
interface TextBlock { type: 'text'; text: string; cache_control?: CacheControl }
interface ImageBlock {
  type: 'image';
  source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };
  cache_control?: CacheControl;
}
interface ToolUseBlock { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
interface ToolResultBlock { type: 'tool_result'; tool_use_id: string; content?: string }
type RequestBlock = TextBlock | ImageBlock | ToolUseBlock | ToolResultBlock;

interface AnthropicTurn { role: 'user' | 'assistant'; content: string | RequestBlock[] }
interface AnthropicTool { name: string; description?: string; input_schema: Record<string, unknown> }
type AnthropicToolChoice =
  | { type: 'auto' | 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

/** The `POST /v1/messages` body Tollgate sends. */
export interface AnthropicRequest {
  model: string;
  max_tokens: number;
  system?: TextBlock[];
  messages: AnthropicTurn[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stop_sequences?: string[];
  tools?: AnthropicTool[];
  tool_choice?: AnthropicToolChoice;
  metadata?: { user_id: string };
  stream?: true;
}

type FieldRule =
  | { rule: 'mapped' }
  | { rule: 'dropped'; why: string }
  /** Refused unless the value changes nothing (then dropped). */
  | { rule: 'refused'; why: string; noop: (value: unknown) => boolean };

const isNullish = (value: unknown) => value === null || value === undefined;
const noopIf = (...values: unknown[]) => (value: unknown) => isNullish(value) || values.includes(value);
const MAPPED: FieldRule = { rule: 'mapped' };

/** The decision for every OpenAI request field (see module doc). */
const REQUEST_FIELDS: Readonly<Record<string, FieldRule>> = {
  model: MAPPED, messages: MAPPED, stream: MAPPED, max_tokens: MAPPED, max_completion_tokens: MAPPED,
  temperature: MAPPED, top_p: MAPPED, top_k: MAPPED, stop: MAPPED, tools: MAPPED, tool_choice: MAPPED,
  parallel_tool_calls: MAPPED, response_format: MAPPED, user: MAPPED, safety_identifier: MAPPED,
  stream_options: { rule: 'dropped', why: 'Anthropic streams always report usage; the core hides it unless asked' },
  store: { rule: 'dropped', why: 'OpenAI-side storage of completions; nothing is stored at Anthropic' },
  metadata: { rule: 'dropped', why: 'tags for OpenAI stored completions; never shown to the model' },
  service_tier: { rule: 'dropped', why: "OpenAI's tiers (flex, scale, priority) have no Anthropic equivalent; the account's default tier serves" },
  seed: { rule: 'dropped', why: 'determinism is best-effort even at OpenAI; Anthropic has no seed' },
  prompt_cache_key: { rule: 'dropped', why: 'a routing hint for OpenAI caches; Anthropic caches by cache_control' },
  prompt_cache_retention: { rule: 'dropped', why: 'OpenAI cache retention; Anthropic sets TTLs per cache_control' },
  n: { rule: 'refused', why: 'Anthropic returns one choice per request', noop: noopIf(1) },
  logprobs: { rule: 'refused', why: 'Anthropic does not return log probabilities', noop: noopIf(false) },
  top_logprobs: { rule: 'refused', why: 'Anthropic does not return log probabilities', noop: noopIf(0) },
  logit_bias: { rule: 'refused', why: 'Anthropic has no token biasing', noop: (v) => isNullish(v) || (typeof v === 'object' && Object.keys(v).length === 0) },
  presence_penalty: { rule: 'refused', why: 'Anthropic has no presence penalty', noop: noopIf(0) },
  frequency_penalty: { rule: 'refused', why: 'Anthropic has no frequency penalty', noop: noopIf(0) },
  reasoning_effort: { rule: 'refused', why: 'extended thinking needs a token budget below max_tokens and default sampling; it is not mapped', noop: noopIf() },
  verbosity: { rule: 'refused', why: 'Anthropic has no verbosity control', noop: noopIf() },
  modalities: { rule: 'refused', why: 'Anthropic answers with text only', noop: (v) => isNullish(v) || (Array.isArray(v) && v.every((m) => m === 'text')) },
  audio: { rule: 'refused', why: 'Anthropic answers with text only', noop: noopIf() },
  prediction: { rule: 'refused', why: 'Anthropic has no predicted outputs', noop: noopIf() },
  web_search_options: { rule: 'refused', why: "Anthropic's web search is a server tool with another shape", noop: noopIf() },
  functions: { rule: 'refused', why: 'deprecated; use "tools"', noop: noopIf() },
  function_call: { rule: 'refused', why: 'deprecated; use "tool_choice"', noop: noopIf() },
};

/** Throws 400 for a field that is refused (or unknown) and not a no-op. */
function checkRequestFields(request: ChatCompletionRequest, provider: string): void {
  for (const [field, value] of Object.entries(request)) {
    const decision = REQUEST_FIELDS[field];
    if (!decision) {
      if (isNullish(value)) continue;
      throw unsupportedParameter(field, provider, 'it is not a Chat Completions parameter Tollgate can translate to the Messages API');
    }
    if (decision.rule === 'refused' && !decision.noop(value)) throw unsupportedParameter(field, provider, decision.why);
  }
}

/** Translates the canonical request into the Messages API body (without `stream`). Throws 400s. */
export function toAnthropicRequest(request: ChatCompletionRequest, model: string, provider: string): AnthropicRequest {
  checkRequestFields(request, provider);
  const { system, messages } = toAnthropicMessages(request.messages, provider);
  const body: AnthropicRequest = { model, max_tokens: maxOutputTokens(request) ?? DEFAULT_MAX_TOKENS, messages };
  if (system.length > 0) body.system = system;
  Object.assign(body, samplingParams(request), toolParams(request));
  checkResponseFormat(request, provider);
  const userId = request.safety_identifier ?? request.user;
  if (typeof userId === 'string' && userId !== '') body.metadata = { user_id: userId };
  return body;
}

function samplingParams(request: ChatCompletionRequest): Partial<AnthropicRequest> {
  const out: Partial<AnthropicRequest> = {};
  // Clamped rather than halved: 0.7 should stay 0.7; anything above 1 means "as random as possible".
  if (typeof request.temperature === 'number') out.temperature = Math.min(request.temperature, MAX_TEMPERATURE);
  if (typeof request.top_p === 'number') out.top_p = request.top_p;
  if (!isNullish(request.top_k)) {
    if (!Number.isInteger(request.top_k) || (request.top_k as number) < 0) {
      throw invalidRequest('"top_k" must be a non-negative integer.', 'top_k');
    }
    out.top_k = request.top_k as number;
  }
  const stop = request.stop;
  if (typeof stop === 'string') out.stop_sequences = [stop];
  else if (Array.isArray(stop) && stop.length > 0) out.stop_sequences = stop as string[];
  return out;
}

function checkResponseFormat(request: ChatCompletionRequest, provider: string): void {
  const format = request.response_format as { type?: string } | null | undefined;
  if (isNullish(format) || format.type === 'text') return;
  throw unsupportedParameter('response_format', provider, `"${format.type}" has no equivalent in the Messages API on every model; only "text" is supported`);
}

/** `tools`, `tool_choice` and `parallel_tool_calls` → Anthropic `tools` / `tool_choice`. */
function toolParams(request: ChatCompletionRequest): Partial<AnthropicRequest> {
  const tools = (request.tools as ChatTool[] | undefined) ?? [];
  const choice = request.tool_choice as string | { type?: string; function?: { name?: string } } | null | undefined;
  if (tools.length === 0) {
    // "auto" and "none" mean the same as sending no tools; anything that demands a tool cannot be met.
    if (isNullish(choice) || choice === 'auto' || choice === 'none') return {};
    throw invalidRequest('"tool_choice" requires "tools".', 'tool_choice');
  }
  const out: Partial<AnthropicRequest> = {
    tools: tools.map((tool) => ({
      name: tool.function.name,
      ...(tool.function.description ? { description: tool.function.description } : {}),
      // `strict` is dropped: Anthropic validates tool input against input_schema on its own terms.
      input_schema: tool.function.parameters ?? { type: 'object', properties: {} },
    })),
  };
  const toolChoice = toAnthropicToolChoice(choice, tools);
  if (request.parallel_tool_calls === false && toolChoice?.type !== 'none') {
    out.tool_choice = Object.assign({}, toolChoice ?? { type: 'auto' }, { disable_parallel_tool_use: true }) as AnthropicToolChoice;
  } else if (toolChoice) {
    out.tool_choice = toolChoice;
  }
  return out;
}

function toAnthropicToolChoice(
  choice: string | { type?: string; function?: { name?: string } } | null | undefined, tools: ChatTool[],
): AnthropicToolChoice | null {
  if (isNullish(choice)) return null;
  if (choice === 'auto') return { type: 'auto' };
  if (choice === 'required') return { type: 'any' };
  if (choice === 'none') return { type: 'none' };
  if (typeof choice === 'object' && choice.type === 'function' && typeof choice.function?.name === 'string') {
    const name = choice.function.name;
    if (!tools.some((tool) => tool.function.name === name)) {
      throw invalidRequest(`"tool_choice" names the function "${name}", which is not in "tools".`, 'tool_choice');
    }
    return { type: 'tool', name };
  }
  throw invalidRequest('"tool_choice" must be "auto", "required", "none" or {"type":"function","function":{"name"}}.', 'tool_choice');
}

// ---------------------------------------------------------------------------------------------
// Messages

/**
 * Splits the conversation into Anthropic's top-level `system` and alternating user/assistant turns.
 * System and developer messages are lifted wherever they appear (Anthropic has one system prompt).
 */
function toAnthropicMessages(messages: ChatMessage[], provider: string): { system: TextBlock[]; messages: AnthropicTurn[] } {
  const system: TextBlock[] = [];
  const turns: Array<{ role: 'user' | 'assistant'; content: RequestBlock[] }> = [];
  const push = (role: 'user' | 'assistant', blocks: RequestBlock[]) => {
    // Empty turns are skipped (Anthropic refuses them); same-role neighbours merge (roles must alternate).
    if (blocks.length === 0) return;
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  };
  messages.forEach((message, i) => {
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...systemBlocks(message, i, provider));
        return;
      case 'user':
        return push('user', userBlocks(message, i, provider));
      case 'assistant':
        return push('assistant', assistantBlocks(message, i, provider));
      case 'tool':
        return push('user', [toolResultBlock(message, i, provider)]);
      default:
        throw unsupportedParameter(`messages[${i}].role`, provider, `the role "${message.role}" is deprecated; send "tool" messages`);
    }
  });
  if (turns.length === 0) throw invalidRequest('"messages" needs at least one non-empty user, assistant or tool message (system prompts become Anthropic\'s "system").', 'messages');
  return { system, messages: turns.map((turn) => ({ role: turn.role, content: compactContent(turn.content) })) };
}

/** A turn that is a single plain text block is sent as a string, the form Anthropic's docs use. */
function compactContent(blocks: RequestBlock[]): string | RequestBlock[] {
  const only = blocks[0]!;
  return blocks.length === 1 && only.type === 'text' && !only.cache_control ? only.text : blocks;
}

function cacheControlOf(part: ChatContentPart, param: string): CacheControl | undefined {
  const value = (part as { cache_control?: unknown }).cache_control;
  if (isNullish(value)) return undefined;
  const cc = value as { type?: unknown; ttl?: unknown };
  if (typeof value !== 'object' || cc.type !== 'ephemeral' || (cc.ttl !== undefined && typeof cc.ttl !== 'string')) {
    throw invalidRequest(`"${param}.cache_control" must be {"type":"ephemeral"} with an optional "ttl".`, `${param}.cache_control`);
  }
  return cc.ttl === undefined ? { type: 'ephemeral' } : { type: 'ephemeral', ttl: cc.ttl };
}

function textBlock(text: string, part: ChatContentPart | null, param: string): TextBlock {
  const cacheControl = part ? cacheControlOf(part, param) : undefined;
  return cacheControl ? { type: 'text', text, cache_control: cacheControl } : { type: 'text', text };
}

function systemBlocks(message: ChatMessage, i: number, provider: string): TextBlock[] {
  if (typeof message.content === 'string') return message.content ? [textBlock(message.content, null, '')] : [];
  contentText(message.content, `messages[${i}].content`, provider); // refuses non-text parts
  return contentParts(message.content)
    .map((part, j) => textBlock((part as { text: string }).text, part, `messages[${i}].content[${j}]`))
    .filter((block) => block.text !== '');
}

function userBlocks(message: ChatMessage, i: number, provider: string): RequestBlock[] {
  const blocks: RequestBlock[] = [];
  contentParts(message.content).forEach((part, j) => {
    const param = `messages[${i}].content[${j}]`;
    if (part.type === 'text' && typeof part.text === 'string') {
      if (part.text !== '') blocks.push(textBlock(part.text, part, param));
    } else if (part.type === 'image_url') {
      blocks.push(imageBlock(part as { type: 'image_url'; image_url: { url: string } }, param, provider));
    } else {
      throw unsupportedParameter(param, provider, `"${part.type}" content parts are not supported; send text or image_url parts`);
    }
  });
  return blocks;
}

/** A data URL → base64 source; an http(s) URL → url source (Anthropic fetches it). */
function imageBlock(part: { type: 'image_url'; image_url: { url: string } } & ChatContentPart, param: string, provider: string): ImageBlock {
  const url = part.image_url.url;
  const cacheControl = cacheControlOf(part, param);
  const withCache = (block: ImageBlock): ImageBlock => (cacheControl ? Object.assign(block, { cache_control: cacheControl }) : block);
  if (/^https?:\/\//i.test(url)) return withCache({ type: 'image', source: { type: 'url', url } });
  const data = parseDataUrl(url);
  if (!data) {
    throw unsupportedParameter(`${param}.image_url`, provider, 'images must be an http(s) URL or a base64 data URL');
  }
  if (!IMAGE_MEDIA_TYPES.has(data.mediaType)) {
    throw unsupportedParameter(`${param}.image_url`, provider, `the image type "${data.mediaType}" is not one of ${[...IMAGE_MEDIA_TYPES].join(', ')}`);
  }
  return withCache({ type: 'image', source: { type: 'base64', media_type: data.mediaType, data: data.data } });
}

function assistantBlocks(message: ChatMessage, i: number, provider: string): RequestBlock[] {
  const blocks: RequestBlock[] = [];
  contentParts(message.content).forEach((part, j) => {
    const param = `messages[${i}].content[${j}]`;
    if (part.type === 'text' && typeof part.text === 'string') {
      if (part.text !== '') blocks.push(textBlock(part.text, part, param));
    } else if (part.type !== 'refusal') {
      throw unsupportedParameter(param, provider, `assistant turns may only hold text, not "${part.type}"`);
    }
  });
  (message.tool_calls ?? []).forEach((call: ChatToolCall, k) => {
    const input = parseToolArguments(call.function.arguments, `messages[${i}].tool_calls[${k}].function.arguments`);
    blocks.push({ type: 'tool_use', id: call.id, name: call.function.name, input });
  });
  return blocks;
}

function toolResultBlock(message: ChatMessage, i: number, provider: string): ToolResultBlock {
  if (typeof message.tool_call_id !== 'string' || message.tool_call_id === '') {
    throw invalidRequest(`"messages[${i}].tool_call_id" is required on tool messages.`, `messages[${i}].tool_call_id`);
  }
  const text = contentText(message.content ?? '', `messages[${i}].content`, provider);
  // An empty result is sent without content: Anthropic refuses empty text.
  return text === '' ? { type: 'tool_result', tool_use_id: message.tool_call_id } : { type: 'tool_result', tool_use_id: message.tool_call_id, content: text };
}
