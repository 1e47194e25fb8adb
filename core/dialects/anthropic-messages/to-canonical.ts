/**
 * A validated Messages API request → the canonical (OpenAI Chat Completions) request that plugins
 * read and translating providers send. The opposite direction of the Anthropic provider's request
 * mapping (docs/provider-wire-formats.md §2.2, read right to left). Native Anthropic upstreams never
 * see this: they receive the client's own body.
 *
 * Sources: https://platform.claude.com/docs/en/api/messages (fields, blocks),
 * https://platform.claude.com/docs/en/agents-and-tools/tool-use/overview (tools, tool_choice,
 * tool_use / tool_result), https://platform.claude.com/docs/en/build-with-claude/extended-thinking ,
 * https://platform.openai.com/docs/api-reference/chat/create (the canonical side).
 *
 * | Messages API | canonical (OpenAI chat) |
 * |---|---|
 * | `model`, `max_tokens`, `temperature`, `top_p` | same names |
 * | `system` string / text blocks | leading `{role:"system"}` message (`cache_control` dropped) |
 * | `messages[i]` `role:"system"` | a system message in place |
 * | text blocks | `content` (one text block → a string, several → text parts) |
 * | `image` `source.type:"base64"` / `"url"` | `image_url` part, `data:<media_type>;base64,<data>` / the url |
 * | assistant `tool_use` | `tool_calls[{id, type:"function", function:{name, arguments: JSON.stringify(input)}}]` |
 * | user `tool_result` | `{role:"tool", tool_call_id, content}` messages, BEFORE the turn's other content (OpenAI wants them right after the tool calls); text blocks joined by "\n"; `is_error` → "Error: " prefix; its images → the user message that follows |
 * | assistant `thinking` / `redacted_thinking` | dropped (Anthropic-only replay, signed for Anthropic) |
 * | `document` and other block kinds | left out, recorded as untranslatable (400 naming `messages[i].content[j].type` on a non-native route) |
 * | `tools[]` `{name, description, input_schema}` | `{type:"function", function:{name, description, parameters}}` |
 * | server tools (`type` set, not `custom`) | left out, recorded as untranslatable (400 naming `tools[i]` on a non-native route) |
 * | `tool_choice` auto / any / tool{name} / none | `"auto"` / `"required"` / `{type:"function",function:{name}}` / `"none"` |
 * | `tool_choice.disable_parallel_tool_use: true` | `parallel_tool_calls: false` |
 * | `stop_sequences` | `stop` |
 * | `metadata.user_id` | `user` |
 * | `thinking` `{type:"enabled", budget_tokens}` | `reasoning_effort`: `low` < 4096 ≤ `medium` < 16384 ≤ `high` |
 * | `stream: true` | `stream: true, stream_options: {include_usage: true}` |
 * | `top_k`, `thinking` disabled/adaptive, every other field | dropped (kept in the client body for native upstreams) |
 *
 * What the canonical form cannot express (`document` blocks, `file` image sources, server tools) does
 * not fail the request here: a native Anthropic upstream receives the client's own body, so Claude
 * Code's PDFs and web search keep working there. It is left out of the canonical request and the first
 * such part is returned as `untranslatable`, which the router throws only when it must translate.
 * Missing required fields are always a 400.
 */
import type { ChatCompletionRequest, ChatContentPart, ChatMessage, ChatTool, ChatToolCall } from '../../canonical/chat-types.ts';
import { invalidRequest, type GatewayError } from '../../errors.ts';
import type {
  ContentBlockParam, ImageBlockParam, MessageParam, MessageRequestBase, ToolParam, ToolResultBlockParam, ToolUseBlockParam,
} from './types.ts';

/** `thinking.budget_tokens` below this is `low` effort; from it up to `HIGH_EFFORT_BUDGET`, `medium`. */
const MEDIUM_EFFORT_BUDGET = 4096;
/** From this budget on, `high` effort. */
const HIGH_EFFORT_BUDGET = 16384;

/** Collects the parts the canonical request leaves out, as the 400s a translation would give. */
interface Untranslatable {
  errors: GatewayError[];
}

/** The canonical request, and the first part it could not carry (null when it carries everything). */
export interface CanonicalMapping {
  request: ChatCompletionRequest;
  untranslatable: GatewayError | null;
}

/**
 * Maps a request validated by the dialect's schema (`max_tokens` absent for count_tokens). Throws a
 * 400 for a missing required field; records what cannot be translated (see the module doc).
 */
export function toCanonical(params: MessageRequestBase): CanonicalMapping {
  const skipped: Untranslatable = { errors: [] };
  const messages: ChatMessage[] = [];
  const system = systemContent(params.system);
  if (system !== null) messages.push({ role: 'system', content: system });
  params.messages.forEach((message, i) => messages.push(...toCanonicalMessages(message, i, skipped)));

  const request: ChatCompletionRequest = { model: params.model, messages };
  if (typeof params.max_tokens === 'number') request.max_tokens = params.max_tokens;
  if (typeof params.temperature === 'number') request.temperature = params.temperature;
  if (typeof params.top_p === 'number') request.top_p = params.top_p;
  if (Array.isArray(params.stop_sequences) && params.stop_sequences.length > 0) request.stop = params.stop_sequences;
  Object.assign(request, toolParams(params, skipped));
  const userId = params.metadata?.user_id;
  if (typeof userId === 'string' && userId !== '') request.user = userId;
  const effort = reasoningEffort(params);
  if (effort) request.reasoning_effort = effort;
  if (params.stream === true) {
    request.stream = true;
    // Anthropic streams always carry usage (message_start / message_delta); the canonical stream must too.
    request.stream_options = { include_usage: true };
  }
  return { request, untranslatable: skipped.errors[0] ?? null };
}

/** The canonical request; throws the first untranslatable part as a 400 (for callers that must translate). */
export function toCanonicalRequest(params: MessageRequestBase): ChatCompletionRequest {
  const { request, untranslatable } = toCanonical(params);
  if (untranslatable) throw untranslatable;
  return request;
}

/** `budget_tokens` → the coarse effort OpenAI-style reasoning models take. */
function reasoningEffort(params: MessageRequestBase): string | null {
  const thinking = params.thinking;
  if (thinking?.type !== 'enabled' || typeof thinking.budget_tokens !== 'number') return null;
  if (thinking.budget_tokens < MEDIUM_EFFORT_BUDGET) return 'low';
  return thinking.budget_tokens < HIGH_EFFORT_BUDGET ? 'medium' : 'high';
}

/** One text → a string, several → text parts: the string form is what every upstream accepts. */
function textContent(texts: string[]): string | ChatContentPart[] {
  return texts.length === 1 ? texts[0]! : texts.map((text) => ({ type: 'text', text }));
}

function systemContent(system: MessageRequestBase['system']): string | ChatContentPart[] | null {
  if (system === undefined || system === null) return null;
  if (typeof system === 'string') return system === '' ? null : system;
  const texts = system.map((block) => block.text).filter((text) => text !== '');
  return texts.length === 0 ? null : textContent(texts);
}

/** What each role's turn may hold here, as the refusal says it. */
const ALLOWED: Readonly<Record<MessageParam['role'], string>> = {
  system: 'a system turn may hold text blocks',
  user: 'a user turn may hold text, image and tool_result blocks',
  assistant: 'an assistant turn may hold text, tool_use, thinking and redacted_thinking blocks',
};

/** Records the 400 for a block the role cannot hold or the canonical form cannot express (`document`, server-tool blocks). */
function unsupportedBlock(block: ContentBlockParam, role: MessageParam['role'], param: string, skipped: Untranslatable): void {
  skipped.errors.push(invalidRequest(
    `Invalid value for "${param}.type": "${block.type}" blocks cannot be translated to the gateway's canonical request; ${ALLOWED[role]}.`,
    `${param}.type`,
  ));
}

/** A string field the schema could not require (it depends on the block's type). */
function stringField(block: ContentBlockParam, field: string, param: string): string {
  const value = (block as Record<string, unknown>)[field];
  if (typeof value !== 'string') throw invalidRequest(`Missing required field "${param}.${field}".`, `${param}.${field}`);
  return value;
}

/** One Messages turn → one or more canonical messages (tool results become their own messages). */
function toCanonicalMessages(message: MessageParam, i: number, skipped: Untranslatable): ChatMessage[] {
  const param = `messages[${i}].content`;
  if (typeof message.content === 'string') return [{ role: message.role, content: message.content }];
  switch (message.role) {
    case 'system':
      return systemMessages(message.content, param, skipped);
    case 'user':
      return userMessages(message.content, param, skipped);
    case 'assistant':
      return assistantMessages(message.content, param, skipped);
  }
}

function systemMessages(blocks: ContentBlockParam[], param: string, skipped: Untranslatable): ChatMessage[] {
  const texts: string[] = [];
  blocks.forEach((block, j) => {
    if (block.type === 'text') texts.push(stringField(block, 'text', `${param}[${j}]`));
    else unsupportedBlock(block, 'system', `${param}[${j}]`, skipped);
  });
  return texts.length === 0 ? [] : [{ role: 'system', content: textContent(texts) }];
}

/**
 * Tool results first, then the turn's text and images as one user message. Images inside a tool
 * result (Claude Code's Read tool on a screenshot) move to that user message: OpenAI tool messages
 * hold text only, and a user message right after the tool messages keeps OpenAI's order valid.
 */
function userMessages(blocks: ContentBlockParam[], param: string, skipped: Untranslatable): ChatMessage[] {
  const toolMessages: ChatMessage[] = [];
  const parts: ChatContentPart[] = [];
  blocks.forEach((block, j) => {
    const at = `${param}[${j}]`;
    switch (block.type) {
      case 'text':
        parts.push({ type: 'text', text: stringField(block, 'text', at) });
        return;
      case 'image': {
        const image = imagePart(block as ImageBlockParam, at, skipped);
        if (image) parts.push(image);
        return;
      }
      case 'tool_result':
        toolMessages.push(toolMessage(block as ToolResultBlockParam, at, parts, skipped));
        return;
      default:
        unsupportedBlock(block, 'user', at, skipped);
    }
  });
  if (parts.length === 0) return toolMessages;
  const onlyText = parts.every((part) => part.type === 'text');
  const content = onlyText ? textContent(parts.map((part) => (part as { text: string }).text)) : parts;
  return [...toolMessages, { role: 'user', content }];
}

/** base64 → a data URL, url → the URL; `file` sources (Files API) have no canonical form (null, recorded). */
function imagePart(block: ImageBlockParam, param: string, skipped: Untranslatable): ChatContentPart | null {
  const source = block.source;
  if (typeof source !== 'object' || source === null) throw invalidRequest(`Missing required field "${param}.source".`, `${param}.source`);
  if (source.type === 'base64') {
    const mediaType = stringField(source, 'media_type', `${param}.source`);
    return { type: 'image_url', image_url: { url: `data:${mediaType};base64,${stringField(source, 'data', `${param}.source`)}` } };
  }
  if (source.type === 'url') return { type: 'image_url', image_url: { url: stringField(source, 'url', `${param}.source`) } };
  skipped.errors.push(invalidRequest(
    `Invalid value for "${param}.source.type": "${source.type}" image sources cannot be translated to the gateway's canonical request; use "base64" or "url".`,
    `${param}.source.type`,
  ));
  return null;
}

/** A `tool_result` → a tool message; its images are appended to `userParts` (see `userMessages`). */
function toolMessage(block: ToolResultBlockParam, param: string, userParts: ChatContentPart[], skipped: Untranslatable): ChatMessage {
  const toolCallId = stringField(block, 'tool_use_id', param);
  let text = '';
  if (typeof block.content === 'string') text = block.content;
  else if (Array.isArray(block.content)) {
    const texts: string[] = [];
    block.content.forEach((inner, k) => {
      const at = `${param}.content[${k}]`;
      if (inner.type === 'text') texts.push(stringField(inner, 'text', at));
      else if (inner.type === 'image') {
        const image = imagePart(inner as ImageBlockParam, at, skipped);
        if (image) userParts.push(image);
      } else {
        skipped.errors.push(invalidRequest(
          `Invalid value for "${at}.type": "${inner.type}" blocks in a tool result cannot be translated to the gateway's canonical request; use text or image blocks.`,
          `${at}.type`,
        ));
      }
    });
    text = texts.join('\n');
  }
  // OpenAI's tool messages have no error flag; the model reads the failure from the text.
  if (block.is_error === true) text = `Error: ${text}`;
  return { role: 'tool', tool_call_id: toolCallId, content: text };
}

function assistantMessages(blocks: ContentBlockParam[], param: string, skipped: Untranslatable): ChatMessage[] {
  const texts: string[] = [];
  const toolCalls: ChatToolCall[] = [];
  blocks.forEach((block, j) => {
    const at = `${param}[${j}]`;
    switch (block.type) {
      case 'text':
        texts.push(stringField(block, 'text', at));
        return;
      case 'tool_use': {
        const input = (block as ToolUseBlockParam).input ?? {};
        const fn = { name: stringField(block, 'name', at), arguments: JSON.stringify(input) };
        toolCalls.push({ id: stringField(block, 'id', at), type: 'function', function: fn });
        return;
      }
      case 'thinking':
      case 'redacted_thinking':
        // Replayed reasoning is signed for Anthropic and means nothing to another upstream.
        return;
      default:
        unsupportedBlock(block, 'assistant', at, skipped);
    }
  });
  const nonEmpty = texts.filter((text) => text !== '');
  // A turn that held only thinking says nothing the canonical conversation can carry.
  if (nonEmpty.length === 0 && toolCalls.length === 0) return [];
  const message: ChatMessage = { role: 'assistant', content: nonEmpty.length === 0 ? null : textContent(nonEmpty) };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return [message];
}

/** `tools` and `tool_choice` → function tools, `tool_choice`, `parallel_tool_calls`. */
function toolParams(params: MessageRequestBase, skipped: Untranslatable): Partial<ChatCompletionRequest> {
  const out: Partial<ChatCompletionRequest> = {};
  const tools = (params.tools ?? []).map((tool, i) => functionTool(tool, i, skipped)).filter((tool): tool is ChatTool => tool !== null);
  if (tools.length > 0) out.tools = tools;
  const choice = params.tool_choice;
  if (!choice) return out;
  switch (choice.type) {
    case 'auto':
      out.tool_choice = 'auto';
      break;
    case 'any':
      out.tool_choice = 'required';
      break;
    case 'none':
      out.tool_choice = 'none';
      break;
    case 'tool':
      if (typeof choice.name !== 'string' || choice.name === '') {
        throw invalidRequest('Missing required field "tool_choice.name" (required when "tool_choice.type" is "tool").', 'tool_choice.name');
      }
      out.tool_choice = { type: 'function', function: { name: choice.name } };
      break;
  }
  if ((choice as { disable_parallel_tool_use?: unknown }).disable_parallel_tool_use === true) out.parallel_tool_calls = false;
  return out;
}

function functionTool(tool: ToolParam, i: number, skipped: Untranslatable): ChatTool | null {
  if (tool.type !== undefined && tool.type !== null && tool.type !== 'custom') {
    skipped.errors.push(invalidRequest(
      `Invalid value for "tools[${i}]": "${tool.type}" is a server tool, which runs only at Anthropic and cannot be translated to the gateway's canonical request.`,
      `tools[${i}]`,
    ));
    return null;
  }
  if (typeof tool.input_schema !== 'object' || tool.input_schema === null) {
    throw invalidRequest(`Missing required field "tools[${i}].input_schema".`, `tools[${i}].input_schema`);
  }
  const fn: ChatTool['function'] = { name: tool.name, parameters: tool.input_schema };
  if (typeof tool.description === 'string' && tool.description !== '') fn.description = tool.description;
  return { type: 'function', function: fn };
}
