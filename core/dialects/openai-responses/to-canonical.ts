/**
 * A validated Responses API request → the canonical (OpenAI Chat Completions) request that plugins
 * read and translating providers send. Native OpenAI upstreams never see this: they receive the
 * client's own body.
 *
 * Sources: openai-node `src/resources/responses/responses.ts` (`ResponseCreateParamsBase`,
 * `ResponseInputItem`, `Tool`, `ResponseTextConfig`), https://platform.openai.com/docs/api-reference/responses/create ,
 * https://platform.openai.com/docs/guides/migrate-to-responses (the item ↔ message correspondence),
 * https://platform.openai.com/docs/api-reference/chat/create (the canonical side).
 *
 * | Responses API | canonical (OpenAI chat) |
 * |---|---|
 * | `model`, `temperature`, `top_p`, `parallel_tool_calls` | same names |
 * | `instructions` | leading `{role:"system"}` message |
 * | `input` string | one user message |
 * | message item, role `user` / `assistant` | a message of that role (one text → a string, several → text parts) |
 * | message item, role `system` / `developer` | a system message in place |
 * | `input_text`, `output_text` parts; `refusal` parts | text (a refusal's text) |
 * | `input_image` `image_url` (+ `detail`) | `image_url` part |
 * | `input_image` `file_id`, `input_file` | left out, recorded as untranslatable (Files API) |
 * | `function_call` items `{call_id, name, arguments}` | `tool_calls` of ONE assistant message per run, after the turn's assistant text |
 * | `function_call_output` `{call_id, output}` | `{role:"tool", tool_call_id, content}`; text parts joined by "\n"; its images → a user message after the run of tool messages |
 * | `reasoning` items | dropped (OpenAI-only replay, encrypted for OpenAI) |
 * | `item_reference`, built-in tool calls (`web_search_call`, `local_shell_call`, `custom_tool_call`, ...) | left out, recorded as untranslatable |
 * | `tools[]` `{type:"function", name, description, parameters, strict}` | `{type:"function", function:{name, description, parameters, strict}}` |
 * | built-in and custom tools (`web_search`, `file_search`, `mcp`, `custom`, ...) | left out, recorded as untranslatable (400 naming `tools[i]`); left out silently when the client marks their type optional (`MappingOptions.optionalTools`) |
 * | `tool_choice` auto / none / required / `{type:"function", name}` | `"auto"` / `"none"` / `"required"` / `{type:"function", function:{name}}`; other kinds untranslatable |
 * | `max_output_tokens` | `max_completion_tokens` |
 * | `reasoning.effort` | `reasoning_effort` |
 * | `text.format` json_schema `{name, schema, strict, description}` / json_object | `response_format` `{type:"json_schema", json_schema:{…}}` / `{type:"json_object"}` |
 * | `stream: true` | `stream: true, stream_options: {include_usage: true}` |
 * | `background: true`, `conversation`, `prompt` | untranslatable (they need OpenAI's stored state) |
 * | `previous_response_id` | not in the canonical request (see below) |
 * | `metadata`, `store`, `include`, `prompt_cache_key`, `truncation`, `user`, `safety_identifier`, `reasoning.summary`, `text.verbosity`, every other field | dropped (kept in the client body for native upstreams) |
 *
 * `previous_response_id` names a stored response; its conversation is not in the body. The canonical
 * request is left as the body gives it and the id is returned as `previousResponseId` (it also stays
 * in the client body): the response-store plugin expands it (`plugins/response-store/`) by mapping a
 * body whose `input` holds the whole conversation.
 *
 * What the canonical form cannot express does not fail the request here: a native OpenAI upstream
 * receives the client's own body, so Codex's built-in tools and stored items keep working there. It
 * is left out of the canonical request and the first such part is returned as `untranslatable`, which
 * the router throws only when it must translate. Missing required fields are always a 400.
 */
import type { ChatCompletionRequest, ChatContentPart, ChatMessage, ChatTool } from '../../canonical/chat-types.ts';
import { flatName } from './namespaces.ts';
import { invalidRequest, type GatewayError } from '../../errors.ts';
import type { FunctionCallItem, FunctionCallOutputItem, InputContentPart, InputItem, InputMessageItem, ResponseCreateParams, ToolParam } from './types.ts';

/** The canonical request, the first part it could not carry, and the stored response it continues. */
export interface CanonicalMapping {
  request: ChatCompletionRequest;
  untranslatable: GatewayError | null;
  /** `previous_response_id`, for the gateway to expand (null when the body has none). */
  previousResponseId: string | null;
  /** The id of the body's first `item_reference` (`''` when it has none), null when there is none. */
  firstReference: string | null;
}

/** Collects what the canonical request leaves out, as the 400s a translation would give. */
type Skipped = GatewayError[];

const CANNOT = 'cannot be translated to the gateway\'s canonical request';
const NONE: ReadonlySet<string> = new Set();

/** How a client wants a translation to treat what it cannot carry. */
export interface MappingOptions {
  /**
   * Built-in tool types (`web_search`, `file_search`, ...; `*` for all) the client marks optional
   * (header `x-tollgate-optional-tools`): a translation leaves them out instead of refusing the request.
   */
  optionalTools?: ReadonlySet<string>;
}

/** Maps a request validated by the dialect's schema. Throws a 400 for a missing required field. */
export function toCanonical(params: ResponseCreateParams, options: MappingOptions = {}): CanonicalMapping {
  const skipped: Skipped = [];
  const messages: ChatMessage[] = [];
  if (typeof params.instructions === 'string' && params.instructions !== '') messages.push({ role: 'system', content: params.instructions });
  if (typeof params.input === 'string') messages.push({ role: 'user', content: params.input });
  else if (Array.isArray(params.input)) appendItems(params.input, messages, skipped);

  const request: ChatCompletionRequest = { model: params.model, messages };
  if (typeof params.max_output_tokens === 'number') request.max_completion_tokens = params.max_output_tokens;
  if (typeof params.temperature === 'number') request.temperature = params.temperature;
  if (typeof params.top_p === 'number') request.top_p = params.top_p;
  Object.assign(request, toolParams(params, skipped, options.optionalTools));
  const effort = params.reasoning?.effort;
  if (typeof effort === 'string' && effort !== '') request.reasoning_effort = effort;
  const format = responseFormat(params.text?.format);
  if (format) request.response_format = format;
  if (params.stream === true) {
    request.stream = true;
    // Responses streams always end with usage (response.completed); the canonical stream must carry it.
    request.stream_options = { include_usage: true };
  }
  const previousResponseId = typeof params.previous_response_id === 'string' && params.previous_response_id !== '' ? params.previous_response_id : null;
  if (params.input === undefined && previousResponseId === null && params.prompt == null) {
    // OpenAI may build the conversation from a stored prompt; a translated request has nothing to send.
    skipped.push(invalidRequest('Missing required field "input" (a translated request needs at least one input item).', 'input'));
  }
  storedState(params, skipped);
  return { request, untranslatable: skipped[0] ?? null, previousResponseId, firstReference: firstReference(params.input) };
}

function firstReference(input: ResponseCreateParams['input']): string | null {
  if (!Array.isArray(input)) return null;
  const reference = input.find((item) => item.type === 'item_reference') as { id?: unknown } | undefined;
  if (!reference) return null;
  return typeof reference.id === 'string' ? reference.id : '';
}

/** Features that live in OpenAI's stored state, which no other upstream has. */
function storedState(params: ResponseCreateParams, skipped: Skipped): void {
  if (params.background === true) skipped.push(invalidRequest(`Invalid value for "background": background responses ${CANNOT}; they are served only by an OpenAI upstream.`, 'background'));
  for (const field of ['conversation', 'prompt']) {
    if (params[field] !== undefined && params[field] !== null) {
      skipped.push(invalidRequest(`Invalid value for "${field}": a stored ${field} ${CANNOT}; it is served only by an OpenAI upstream.`, field));
    }
  }
}

/** A string field the schema could not require (it depends on the item's type). */
function stringField(item: object, field: string, param: string): string {
  const value = (item as Record<string, unknown>)[field];
  if (typeof value !== 'string') throw invalidRequest(`Missing required field "${param}.${field}".`, `${param}.${field}`);
  return value;
}

/** One text → a string, several → text parts: the string form is what every upstream accepts. */
function textContent(texts: string[]): string | ChatContentPart[] {
  return texts.length === 1 ? texts[0]! : texts.map((text) => ({ type: 'text', text }));
}

/** Input items → canonical messages, in order; function calls and their outputs grouped as chat wants them. */
function appendItems(items: InputItem[], messages: ChatMessage[], skipped: Skipped): void {
  /** Images from function call outputs, sent as one user message after the run of tool messages. */
  let pendingImages: ChatContentPart[] = [];
  const flushImages = () => {
    if (pendingImages.length > 0) messages.push({ role: 'user', content: pendingImages });
    pendingImages = [];
  };
  items.forEach((item, i) => {
    const param = `input[${i}]`;
    if (item.type !== 'function_call_output') flushImages();
    if (item.type === undefined || item.type === 'message') {
      const message = messageOf(item as InputMessageItem, param, skipped);
      if (message) messages.push(message);
      return;
    }
    switch (item.type) {
      case 'function_call':
        appendFunctionCall(item as FunctionCallItem, param, messages);
        return;
      case 'function_call_output':
        messages.push(toolMessage(item as FunctionCallOutputItem, param, pendingImages, skipped));
        return;
      case 'reasoning':
        // Replayed reasoning is encrypted for OpenAI and means nothing to another upstream.
        return;
      case 'item_reference':
        skipped.push(invalidRequest(`Invalid value for "${param}.type": "item_reference" items point at items OpenAI stored and ${CANNOT}; send the items themselves.`, `${param}.type`));
        return;
      default:
        skipped.push(invalidRequest(
          `Invalid value for "${param}.type": "${item.type}" items ${CANNOT}; it can carry message, function_call, function_call_output and reasoning items.`,
          `${param}.type`,
        ));
    }
  });
  flushImages();
}

/**
 * A function call joins the assistant message just before it (the turn's text, or the calls already
 * gathered): chat wants every call of a turn in one assistant message, answered by the tool messages after it.
 */
/** A replayed call's chat name: flattened when it was a namespaced tool's. */
function qualifiedName(item: FunctionCallItem, param: string): string {
  const name = stringField(item, 'name', param);
  const namespace = (item as { namespace?: unknown }).namespace;
  return typeof namespace === 'string' && namespace !== '' ? flatName(namespace, name) : name;
}

function appendFunctionCall(item: FunctionCallItem, param: string, messages: ChatMessage[]): void {
  const call = {
    id: stringField(item, 'call_id', param),
    type: 'function' as const,
    function: { name: qualifiedName(item, param), arguments: stringField(item, 'arguments', param) },
  };
  const last = messages.at(-1);
  if (last?.role === 'assistant') last.tool_calls = [...(last.tool_calls ?? []), call];
  else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
}

/** What each role's message may hold here, as the refusal says it. */
const ALLOWED: Readonly<Record<InputMessageItem['role'], string>> = {
  system: 'a system message may hold input_text parts',
  developer: 'a developer message may hold input_text parts',
  user: 'a user message may hold input_text and input_image parts',
  assistant: 'an assistant message may hold output_text and refusal parts',
};

const TEXT_PARTS: Readonly<Record<InputMessageItem['role'], readonly string[]>> = {
  system: ['input_text'],
  developer: ['input_text'],
  user: ['input_text'],
  assistant: ['output_text', 'input_text', 'refusal'],
};

/** A message item → one canonical message (null when nothing of it can be carried). */
function messageOf(item: InputMessageItem, param: string, skipped: Skipped): ChatMessage | null {
  const role = item.role;
  if (typeof role !== 'string') throw invalidRequest(`Missing required field "${param}.role".`, `${param}.role`);
  const chatRole = role === 'developer' ? 'system' : role;
  if (typeof item.content === 'string') return { role: chatRole, content: item.content };
  if (!Array.isArray(item.content)) throw invalidRequest(`Missing required field "${param}.content".`, `${param}.content`);
  const parts: ChatContentPart[] = [];
  item.content.forEach((part, j) => {
    const at = `${param}.content[${j}]`;
    if (TEXT_PARTS[role].includes(part.type)) {
      parts.push({ type: 'text', text: stringField(part, part.type === 'refusal' ? 'refusal' : 'text', at) });
    } else if (part.type === 'input_image' && role === 'user') {
      const image = imagePart(part, at, skipped);
      if (image) parts.push(image);
    } else {
      const why = part.type === 'input_file' ? 'files (input_file) are read only by an OpenAI upstream' : ALLOWED[role];
      skipped.push(invalidRequest(`Invalid value for "${at}.type": "${part.type}" parts ${CANNOT}; ${why}.`, `${at}.type`));
    }
  });
  if (parts.length === 0) return null;
  const onlyText = parts.every((part) => part.type === 'text');
  return { role: chatRole, content: onlyText ? textContent(parts.map((part) => (part as { text: string }).text)) : parts };
}

/** `input_image` with a URL → an `image_url` part; a `file_id` (Files API) has no canonical form (null, recorded). */
function imagePart(part: InputContentPart, param: string, skipped: Skipped): ChatContentPart | null {
  const url = part.image_url;
  if (typeof url !== 'string' || url === '') {
    if (typeof part.file_id === 'string') {
      skipped.push(invalidRequest(`Invalid value for "${param}.file_id": images uploaded to OpenAI's Files API ${CANNOT}; send "image_url" (a URL or a data URL).`, `${param}.file_id`));
      return null;
    }
    throw invalidRequest(`Missing required field "${param}.image_url".`, `${param}.image_url`);
  }
  const detail = part.detail;
  const image: { url: string; detail?: 'auto' | 'low' | 'high' } = { url };
  // Chat knows auto, low and high; "original" (and anything newer) is left to the upstream's default.
  if (detail === 'auto' || detail === 'low' || detail === 'high') image.detail = detail;
  return { type: 'image_url', image_url: image };
}

/** A `function_call_output` → a tool message; its images go to `images` (see `appendItems`). */
function toolMessage(item: FunctionCallOutputItem, param: string, images: ChatContentPart[], skipped: Skipped): ChatMessage {
  const toolCallId = stringField(item, 'call_id', param);
  const output = item.output;
  if (typeof output === 'string') return { role: 'tool', tool_call_id: toolCallId, content: output };
  if (!Array.isArray(output)) throw invalidRequest(`Missing required field "${param}.output".`, `${param}.output`);
  const texts: string[] = [];
  output.forEach((part, k) => {
    const at = `${param}.output[${k}]`;
    if (part.type === 'input_text' || part.type === 'output_text') texts.push(stringField(part, 'text', at));
    else if (part.type === 'input_image') {
      const image = imagePart(part, at, skipped);
      if (image) images.push(image);
    } else {
      skipped.push(invalidRequest(`Invalid value for "${at}.type": "${part.type}" parts in a function call output ${CANNOT}; use input_text or input_image parts.`, `${at}.type`));
    }
  });
  // OpenAI's tool messages hold text only; the images follow in a user message.
  return { role: 'tool', tool_call_id: toolCallId, content: texts.join('\n') };
}

/** `tools`, `tool_choice`, `parallel_tool_calls` → their chat forms. */
function toolParams(params: ResponseCreateParams, skipped: Skipped, optional: ReadonlySet<string> = NONE): Partial<ChatCompletionRequest> {
  const out: Partial<ChatCompletionRequest> = {};
  const droppable = (tool: ToolParam) => tool.type !== 'function' && tool.type !== 'namespace' && (optional.has(tool.type) || optional.has('*'));
  const tools = (params.tools ?? []).flatMap((tool, i) => (droppable(tool) ? [] : tool.type === 'namespace' ? namespaceTools(tool, i, skipped) : [functionTool(tool, i, skipped)]))
    .filter((tool): tool is ChatTool => tool !== null);
  if (tools.length > 0) out.tools = tools;
  const choice = params.tool_choice;
  if (choice === 'auto' || choice === 'none' || choice === 'required') out.tool_choice = choice;
  else if (typeof choice === 'object' && choice !== null) {
    if (choice.type === 'function') {
      if (typeof choice.name !== 'string' || choice.name === '') {
        throw invalidRequest('Missing required field "tool_choice.name" (required when "tool_choice.type" is "function").', 'tool_choice.name');
      }
      out.tool_choice = { type: 'function', function: { name: choice.name } };
    } else {
      skipped.push(invalidRequest(`Invalid value for "tool_choice": "${choice.type}" ${CANNOT}; use "auto", "none", "required" or {"type":"function","name"}.`, 'tool_choice'));
    }
  }
  if (typeof params.parallel_tool_calls === 'boolean') out.parallel_tool_calls = params.parallel_tool_calls;
  return out;
}

/** A namespace's function tools, flattened to `<namespace>__<name>` (`namespaces.ts`). */
function namespaceTools(tool: ToolParam, i: number, skipped: Skipped): Array<ChatTool | null> {
  const namespace = tool.name;
  if (typeof namespace !== 'string' || namespace === '') throw invalidRequest(`Missing required field "tools[${i}].name".`, `tools[${i}].name`);
  const inner = Array.isArray(tool.tools) ? (tool.tools as ToolParam[]) : [];
  return inner.map((fn, j) => {
    const flat = functionTool(fn, i, skipped, `tools[${i}].tools[${j}]`);
    if (flat) flat.function.name = flatName(namespace, flat.function.name);
    return flat;
  });
}

function functionTool(tool: ToolParam, i: number, skipped: Skipped, at = `tools[${i}]`): ChatTool | null {
  if (tool.type !== 'function') {
    skipped.push(invalidRequest(
      `Invalid value for "${at}": "${tool.type}" tools ${CANNOT} (only "function" and "namespace" tools can); they work only with an OpenAI upstream. To have the gateway leave them out instead, send the header "x-tollgate-optional-tools: ${tool.type}".`,
      at,
    ));
    return null;
  }
  const name = tool.name;
  if (typeof name !== 'string' || name === '') throw invalidRequest(`Missing required field "${at}.name".`, `${at}.name`);
  const fn: ChatTool['function'] = { name };
  if (typeof tool.description === 'string' && tool.description !== '') fn.description = tool.description;
  if (typeof tool.parameters === 'object' && tool.parameters !== null) fn.parameters = tool.parameters as Record<string, unknown>;
  if (typeof tool.strict === 'boolean') fn.strict = tool.strict;
  return { type: 'function', function: fn };
}

/** `text.format` → `response_format`; plain text (the default) → none. */
function responseFormat(format: NonNullable<ResponseCreateParams['text']>['format']): Record<string, unknown> | null {
  if (!format) return null;
  if (format.type === 'json_object') return { type: 'json_object' };
  if (format.type !== 'json_schema') return null;
  const f = format as Record<string, unknown>;
  if (typeof f.name !== 'string') throw invalidRequest('Missing required field "text.format.name".', 'text.format.name');
  if (typeof f.schema !== 'object' || f.schema === null) throw invalidRequest('Missing required field "text.format.schema".', 'text.format.schema');
  const jsonSchema: Record<string, unknown> = { name: f.name, schema: f.schema };
  if (typeof f.description === 'string') jsonSchema.description = f.description;
  if (typeof f.strict === 'boolean') jsonSchema.strict = f.strict;
  return { type: 'json_schema', json_schema: jsonSchema };
}
