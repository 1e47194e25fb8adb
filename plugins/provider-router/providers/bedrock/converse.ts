/**
 * The Converse API (`POST /model/{id}/converse`, `/converse-stream`): Bedrock's one request shape for
 * every chat model, translated from the canonical (OpenAI) request and back.
 *
 * Request: system / developer messages → `system: [{text}]`; user and assistant turns →
 * `messages: [{role, content: [{text} | {image: {format, source: {bytes}}} | {toolUse} | {toolResult}]}]`
 * (tool messages become the next user turn's `toolResult` blocks; consecutive turns of one role are
 * merged, since Converse wants them alternating); `max_completion_tokens` ?? `max_tokens`,
 * `temperature`, `top_p`, `stop` → `inferenceConfig` (`maxTokens`, `temperature`, `topP`,
 * `stopSequences`); `tools` → `toolConfig.tools[].toolSpec` (`inputSchema.json`), `tool_choice`
 * `auto` / `required` / a named function → `{auto}` / `{any}` / `{tool: {name}}` (`none` sends no
 * tools: Converse has no such choice). Images must be data URLs (Converse takes bytes, not URLs).
 * Fields with no Converse equivalent that change the answer (`n` > 1, `logprobs`, JSON mode, …) are
 * refused with a 400 naming them; the rest (`stream_options`, `user`, `metadata`, …) are dropped.
 *
 * Response: `output.message.content` text joined, `toolUse` → `tool_calls`; `stopReason` `end_turn` /
 * `stop_sequence` → `stop`, `max_tokens` → `length`, `tool_use` → `tool_calls`,
 * `guardrail_intervened` / `content_filtered` → `content_filter`. Usage: `inputTokens` excludes the
 * cache, so `prompt_tokens = inputTokens + cacheReadInputTokens + cacheWriteInputTokens`.
 *
 * Sources: https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html ,
 * API_runtime_ConverseStream.html, API_runtime_TokenUsage.html, API_runtime_ContentBlock.html.
 */
import type { ChatCompletionRequest, ChatMessage, ChatTool } from '../../../../core/canonical/chat-types.ts';
import type { ResponseCodec } from '../../../../core/upstream/upstream-call.ts';
import {
  completionId, contentParts, contentText, malformedResponse, maxOutputTokens, nowUnixSec, parseDataUrl, parseToolArguments,
  parseUpstreamJson, unsupportedParameter,
} from '../canonical.ts';
import { mapBedrockError } from './errors.ts';
import { sseEvent, transcodeEventStream, type AwsStreamMessage } from './event-stream.ts';
import { ConverseStreamDecoder } from './converse-stream.ts';
import { converseFinishReason, usageFromConverse, type ConverseUsage } from './converse-answer.ts';

type Block = Record<string, unknown>;
interface Turn { role: 'user' | 'assistant'; content: Block[] }

/** Fields dropped: they ask nothing of the answer Converse could honour or miss. */
const DROPPED = new Set(['model', 'messages', 'stream', 'stream_options', 'user', 'safety_identifier', 'metadata', 'store', 'service_tier',
  'parallel_tool_calls', 'prompt_cache_key', 'prompt_cache_retention', 'seed', 'max_tokens', 'max_completion_tokens', 'temperature', 'top_p',
  'stop', 'tools', 'tool_choice']);
/** Values of refused fields that ask for nothing (the defaults). */
const NO_OP: Readonly<Record<string, (value: unknown) => boolean>> = {
  n: (v) => v === 1, presence_penalty: (v) => v === 0, frequency_penalty: (v) => v === 0, logprobs: (v) => v === false,
  response_format: (v) => (v as { type?: string }).type === 'text', modalities: (v) => Array.isArray(v) && v.length === 1 && v[0] === 'text',
};
const IMAGE_FORMATS: Readonly<Record<string, string>> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };
function userBlocks(message: ChatMessage, index: number, provider: string): Block[] {
  return contentParts(message.content).map((part, p) => {
    if (part.type === 'text') return { text: part.text };
    if (part.type === 'image_url') {
      const url = (part as { image_url?: { url?: string } }).image_url?.url ?? '';
      const data = parseDataUrl(url);
      const format = data ? IMAGE_FORMATS[data.mediaType] : undefined;
      if (!data || !format) throw unsupportedParameter(`messages[${index}].content[${p}]`, provider, 'Converse takes images as base64 data URLs of png, jpeg, gif or webp');
      return { image: { format, source: { bytes: data.data } } };
    }
    throw unsupportedParameter(`messages[${index}].content[${p}]`, provider, `content parts of type "${part.type}" are not supported`);
  });
}

function assistantBlocks(message: ChatMessage, index: number, provider: string): Block[] {
  const text = message.content ? contentText(message.content, `messages[${index}].content`, provider) : '';
  const blocks: Block[] = text ? [{ text }] : [];
  for (const [c, call] of (message.tool_calls ?? []).entries()) {
    blocks.push({ toolUse: { toolUseId: call.id, name: call.function.name, input: parseToolArguments(call.function.arguments, `messages[${index}].tool_calls[${c}].function.arguments`) } });
  }
  return blocks;
}

function turnsOf(messages: ChatMessage[], provider: string): { system: Block[]; turns: Turn[] } {
  const system: Block[] = [];
  const turns: Turn[] = [];
  const push = (role: Turn['role'], content: Block[]) => {
    if (content.length === 0) return;
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...content);
    else turns.push({ role, content });
  };
  messages.forEach((message, i) => {
    if (message.role === 'system' || message.role === 'developer') system.push({ text: contentText(message.content, `messages[${i}].content`, provider) });
    else if (message.role === 'user') push('user', userBlocks(message, i, provider));
    else if (message.role === 'assistant') push('assistant', assistantBlocks(message, i, provider));
    else if (message.role === 'tool') {
      const text = contentText(message.content, `messages[${i}].content`, provider);
      push('user', [{ toolResult: { toolUseId: message.tool_call_id, content: [{ text }] } }]);
    } else throw unsupportedParameter(`messages[${i}].role`, provider, `the role "${message.role}" is not supported`);
  });
  return { system, turns };
}

function toolConfigOf(request: ChatCompletionRequest): Record<string, unknown> | undefined {
  const tools = request.tools as ChatTool[] | undefined;
  const choice = request.tool_choice as string | { function?: { name?: string } } | undefined;
  if (!tools || tools.length === 0 || choice === 'none') return undefined;
  const config: Record<string, unknown> = {
    tools: tools.map((tool) => ({
      toolSpec: { name: tool.function.name, ...(tool.function.description ? { description: tool.function.description } : {}), inputSchema: { json: tool.function.parameters ?? { type: 'object', properties: {} } } },
    })),
  };
  if (choice === 'auto') config.toolChoice = { auto: {} };
  else if (choice === 'required') config.toolChoice = { any: {} };
  else if (typeof choice === 'object' && choice?.function?.name) config.toolChoice = { tool: { name: choice.function.name } };
  return config;
}

/** The canonical request → a Converse body. Throws 400 (param named) for what Converse cannot honour. */
export function toConverseRequest(request: ChatCompletionRequest, provider: string): Record<string, unknown> {
  for (const [field, value] of Object.entries(request)) {
    if (DROPPED.has(field) || value === null || value === undefined) continue;
    if (NO_OP[field]?.(value)) continue;
    throw unsupportedParameter(field, provider, 'the Converse API has no equivalent');
  }
  const { system, turns } = turnsOf(request.messages, provider);
  const body: Record<string, unknown> = { messages: turns };
  if (system.length > 0) body.system = system;
  const inference: Record<string, unknown> = {};
  const maxTokens = maxOutputTokens(request);
  if (typeof maxTokens === 'number') inference.maxTokens = maxTokens;
  if (typeof request.temperature === 'number') inference.temperature = request.temperature;
  if (typeof request.top_p === 'number') inference.topP = request.top_p;
  if (typeof request.stop === 'string') inference.stopSequences = [request.stop];
  else if (Array.isArray(request.stop)) inference.stopSequences = request.stop;
  if (Object.keys(inference).length > 0) body.inferenceConfig = inference;
  const toolConfig = toolConfigOf(request);
  if (toolConfig) body.toolConfig = toolConfig;
  return body;
}

interface ConverseResponse {
  output?: { message?: { content?: Array<{ text?: string; toolUse?: { toolUseId: string; name: string; input: unknown } }> } };
  stopReason?: string;
  usage?: ConverseUsage;
}

/** One event-stream message of a Converse stream as SSE: the event's name and payload; an exception as `error`. */
function converseSse(message: AwsStreamMessage): string {
  if (message.messageType === 'event') return sseEvent(message.name, message.payload || '{}');
  let text = message.payload;
  if (message.messageType === 'exception') {
    try {
      text = (JSON.parse(message.payload) as { message?: string }).message ?? '';
    } catch {
      // The payload is not JSON: quoted as it is.
    }
  }
  return sseEvent('error', JSON.stringify({ exception: message.name, message: text }));
}

export function converseCodec(provider: string, model: string): ResponseCodec {
  return {
    framing: 'sse',
    transcode: (body) => transcodeEventStream(body, provider, converseSse),
    decodeError: (status, bodyText, headers) => mapBedrockError(provider, model, status, bodyText, headers),
    decodeResponse: (bodyText) => {
      const answer = parseUpstreamJson<ConverseResponse>(provider, bodyText, 'a response');
      const content = answer?.output?.message?.content;
      if (!Array.isArray(content)) throw malformedResponse(provider, 'a Converse answer without "output.message.content"');
      let text = '';
      const toolCalls = [];
      for (const block of content) {
        if (typeof block.text === 'string') text += block.text;
        else if (block.toolUse) toolCalls.push({ id: block.toolUse.toolUseId, type: 'function' as const, function: { name: block.toolUse.name, arguments: JSON.stringify(block.toolUse.input ?? {}) } });
      }
      const message: ChatMessage = { role: 'assistant', content: toolCalls.length > 0 && text === '' ? null : text };
      if (toolCalls.length > 0) message.tool_calls = toolCalls;
      return {
        completion: {
          id: completionId(), object: 'chat.completion', created: nowUnixSec(), model,
          choices: [{ index: 0, message, finish_reason: converseFinishReason(answer.stopReason) }],
          usage: usageFromConverse(answer.usage ?? {}),
        },
        raw: null,
      };
    },
    createStreamDecoder: () => new ConverseStreamDecoder(provider, model),
  };
}
