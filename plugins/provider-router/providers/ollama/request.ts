/**
 * Ollama request mapping: the canonical (OpenAI) chat request → the `POST /api/chat` body.
 *
 * Sources (docs/provider-wire-formats.md §5.1):
 * - Chat request: https://docs.ollama.com/api/chat , ollama-js `src/interfaces.ts` (`ChatRequest`, `Message`, `ToolCall`).
 * - Sampling options (`options.temperature`, `top_p`, `num_predict`, `stop`, `seed`, penalties):
 *   https://docs.ollama.com/modelfile#valid-parameters-and-values .
 * - Tools (`arguments` are objects, results use `tool_name`): https://docs.ollama.com/capabilities/tool-calling .
 * - Images (`images: [<raw base64>]` on the message): https://docs.ollama.com/capabilities/vision .
 * - JSON mode / structured outputs (`format: "json" | <JSON Schema>`): https://docs.ollama.com/capabilities/structured-outputs .
 *
 * Request mapping (everything else a client sends gets one of these decisions):
 * - mapped: `messages` (system/developer → `system`; user text + image data URLs → `content` +
 *   `images`; assistant `tool_calls` with `arguments` parsed to objects; tool results → `tool` with the
 *   function name recovered as `tool_name`), `tools`, `tool_choice: "none"` (the tools are not sent),
 *   `response_format` (`json_object` → `format: "json"`, `json_schema` → `format: <schema>`),
 *   `temperature` (no clamping: Ollama accepts OpenAI's whole 0–2 range), `top_p`,
 *   `max_completion_tokens ?? max_tokens` → `options.num_predict`, `stop` (always an array), `seed`,
 *   `presence_penalty`, `frequency_penalty`, `stream` (always sent explicitly: Ollama streams by default).
 * - dropped, with the reason: see `DROPPED` below (`user`, `metadata`, `store`, `service_tier`,
 *   `reasoning_effort`, `prediction`, `stream_options`, message `name`, tool `strict`, image `detail`, ...).
 * - refused with 400 naming the parameter: see `REFUSED` below (`n` > 1, `logprobs`, `logit_bias`,
 *   `audio`, ...), plus `tool_choice: "required"` / named, `parallel_tool_calls: false`, image http(s)
 *   URLs (the gateway does not fetch URLs), non-text/non-image parts, the deprecated `function` role.
 * - `keep_alive`, `think` and other Ollama-only fields are not sent: the server defaults apply.
 */
import type { ChatCompletionRequest, ChatContentPart, ChatMessage, ChatTool, ChatToolCall } from '../../../../core/canonical/chat-types.ts';
import { contentParts, contentText, maxOutputTokens, parseDataUrl, parseToolArguments, unsupportedParameter } from '../canonical.ts';

// Ollama request shapes (ollama-js src/interfaces.ts)

interface OllamaToolCall {
  function: { name: string; arguments: Record<string, unknown> };
}

interface OllamaMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  images?: string[];
  tool_calls?: OllamaToolCall[];
  tool_name?: string;
}

interface OllamaTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

/** `options`: the Modelfile parameters Tollgate maps from OpenAI fields. */
interface OllamaOptions {
  temperature?: number;
  top_p?: number;
  num_predict?: number;
  stop?: string[];
  seed?: number;
  presence_penalty?: number;
  frequency_penalty?: number;
}

/** The `POST /api/chat` body Tollgate sends. */
export interface OllamaChatRequest {
  model: string;
  messages: OllamaMessage[];
  stream: boolean;
  tools?: OllamaTool[];
  format?: 'json' | Record<string, unknown>;
  options?: OllamaOptions;
}

/**
 * OpenAI fields Tollgate does not send, and why. Nothing reads them: this table is the record of the
 * decision (the upstream body is built field by field, never by spreading the client's request).
 */
export const DROPPED: Readonly<Record<string, string>> = {
  user: 'an end-user id for OpenAI abuse tracking; the gateway logs its own user',
  metadata: 'OpenAI dashboard tags; Ollama stores nothing',
  store: 'OpenAI-side storage of completions; Ollama stores nothing',
  service_tier: 'a local server has no tiers',
  reasoning_effort: 'Ollama\'s `think` levels exist only for some models and `think` on a model without thinking is a 400; the model\'s default applies',
  prediction: 'predicted outputs only speed OpenAI up; the answer is the same without them',
  stream_options: 'Ollama always reports the counts on its final line; the core hides the usage chunk unless asked',
  prompt_cache_key: 'Ollama caches prompt prefixes on its own',
  safety_identifier: 'an OpenAI abuse-tracking id',
  verbosity: 'an OpenAI reasoning-model hint with no Ollama equivalent',
  'messages[].name': 'Ollama messages have no participant names',
  'messages[].refusal': 'an earlier refusal needs no replay; the assistant content carries the turn',
  'tools[].function.strict': 'Ollama has no strict mode; the schema still constrains the model as a prompt',
  'content[].image_url.detail': 'Ollama has no image detail level',
  'tool_choice: "auto"': 'Ollama\'s only behaviour',
  'parallel_tool_calls: true': 'Ollama\'s default',
  'n: 1': 'Ollama\'s only behaviour',
};

const isSet = (value: unknown) => value !== undefined && value !== null && value !== false;

/** Fields refused with a 400 when set: Ollama cannot honour them and ignoring them would change the answer. */
const REFUSED: ReadonlyArray<{ param: string; applies: (value: unknown) => boolean; why: string }> = [
  { param: 'n', applies: (v) => typeof v === 'number' && v > 1, why: 'Ollama generates one choice per request' },
  { param: 'logprobs', applies: isSet, why: 'Tollgate does not translate Ollama\'s log probabilities' },
  { param: 'top_logprobs', applies: (v) => typeof v === 'number' && v > 0, why: 'Tollgate does not translate Ollama\'s log probabilities' },
  { param: 'logit_bias', applies: (v) => isSet(v) && Object.keys(v as object).length > 0, why: 'Ollama has no logit bias' },
  { param: 'audio', applies: isSet, why: 'Ollama produces text only' },
  { param: 'modalities', applies: (v) => Array.isArray(v) && v.some((m) => m !== 'text'), why: 'Ollama produces text only' },
  { param: 'web_search_options', applies: isSet, why: 'Ollama has no built-in web search' },
  { param: 'functions', applies: isSet, why: 'the deprecated functions API is not translated; use "tools"' },
  { param: 'function_call', applies: isSet, why: 'the deprecated functions API is not translated; use "tool_choice"' },
];

function refuseUnsupported(request: ChatCompletionRequest, provider: string): void {
  for (const { param, applies, why } of REFUSED) {
    if (applies(request[param])) throw unsupportedParameter(param, provider, why);
  }
}

/** Builds the `POST /api/chat` body. Throws 400 (`GatewayError`) for what Ollama cannot honour. */
export function toOllamaRequest(request: ChatCompletionRequest, model: string, provider: string): OllamaChatRequest {
  refuseUnsupported(request, provider);
  const body: OllamaChatRequest = { model, messages: toOllamaMessages(request.messages, provider), stream: request.stream === true };
  const tools = toOllamaTools(request, provider);
  if (tools) body.tools = tools;
  const format = toOllamaFormat(request.response_format, provider);
  if (format !== undefined) body.format = format;
  const options = toOllamaOptions(request);
  if (Object.keys(options).length > 0) body.options = options;
  return body;
}

function toOllamaOptions(request: ChatCompletionRequest): OllamaOptions {
  const options: OllamaOptions = {};
  const num = (field: string) => (typeof request[field] === 'number' ? request[field] : undefined);
  const temperature = num('temperature');
  if (temperature !== undefined) options.temperature = temperature;
  const topP = num('top_p');
  if (topP !== undefined) options.top_p = topP;
  const maxTokens = maxOutputTokens(request);
  if (maxTokens !== null) options.num_predict = maxTokens;
  const stop = request.stop;
  if (typeof stop === 'string') options.stop = [stop];
  else if (Array.isArray(stop) && stop.length > 0) options.stop = stop as string[];
  const seed = num('seed');
  if (seed !== undefined) options.seed = seed;
  const presence = num('presence_penalty');
  if (presence !== undefined) options.presence_penalty = presence;
  const frequency = num('frequency_penalty');
  if (frequency !== undefined) options.frequency_penalty = frequency;
  return options;
}

/**
 * `tools` → Ollama `tools` (same function shape, `strict` dropped). Ollama has no `tool_choice`:
 * `auto` is its behaviour, `none` is honoured by not sending the tools, and `required` or a named
 * function cannot be enforced, so they are refused. `parallel_tool_calls: false` cannot be enforced either.
 */
function toOllamaTools(request: ChatCompletionRequest, provider: string): OllamaTool[] | undefined {
  const choice = request.tool_choice;
  if (choice !== undefined && choice !== null && choice !== 'auto' && choice !== 'none') {
    throw unsupportedParameter('tool_choice', provider, 'Ollama has no tool_choice; only "auto" and "none" can be honoured');
  }
  const tools = request.tools as ChatTool[] | undefined;
  if (!tools || tools.length === 0 || choice === 'none') return undefined;
  if (request.parallel_tool_calls === false) {
    throw unsupportedParameter('parallel_tool_calls', provider, 'Ollama cannot be limited to one tool call per turn');
  }
  return tools.map((tool) => {
    const fn: OllamaTool['function'] = { name: tool.function.name };
    if (tool.function.description !== undefined) fn.description = tool.function.description;
    if (tool.function.parameters !== undefined) fn.parameters = tool.function.parameters;
    return { type: 'function', function: fn };
  });
}

/** `response_format` → `format`: `"json"` for JSON mode, the schema itself for structured outputs. */
function toOllamaFormat(responseFormat: unknown, provider: string): OllamaChatRequest['format'] | undefined {
  if (responseFormat === undefined || responseFormat === null) return undefined;
  const format = responseFormat as { type?: unknown; json_schema?: { schema?: unknown } };
  switch (format.type) {
    case 'text':
      return undefined;
    case 'json_object':
      return 'json';
    case 'json_schema': {
      const schema = format.json_schema?.schema;
      if (!schema || typeof schema !== 'object' || Array.isArray(schema)) {
        throw unsupportedParameter('response_format.json_schema.schema', provider, 'Ollama needs the JSON Schema object itself');
      }
      return schema as Record<string, unknown>;
    }
    default:
      throw unsupportedParameter('response_format.type', provider, `only "text", "json_object" and "json_schema" can be translated, not "${String(format.type)}"`);
  }
}

/** The canonical history as Ollama messages. Tool results get the function name of the call they answer. */
function toOllamaMessages(messages: ChatMessage[], provider: string): OllamaMessage[] {
  const toolNames = new Map<string, string>();
  return messages.map((message, i) => {
    const param = `messages[${i}]`;
    switch (message.role) {
      case 'system':
      case 'developer':
        return { role: 'system', content: contentText(message.content, `${param}.content`, provider) };
      case 'user':
        return toOllamaUserMessage(message.content, param, provider);
      case 'assistant':
        return toOllamaAssistantMessage(message, param, provider, toolNames);
      case 'tool': {
        const out: OllamaMessage = { role: 'tool', content: contentText(message.content, `${param}.content`, provider) };
        // An unknown id (history trimmed by the client) leaves tool_name out; Ollama accepts that.
        const name = message.tool_call_id === undefined ? undefined : toolNames.get(message.tool_call_id);
        if (name !== undefined) out.tool_name = name;
        return out;
      }
      default:
        throw unsupportedParameter(`${param}.role`, provider, `the "${message.role}" role is not translated; use "tool" messages`);
    }
  });
}

/** User content: text parts joined with newlines, image data URLs as raw base64 in `images`. */
function toOllamaUserMessage(content: ChatMessage['content'], param: string, provider: string): OllamaMessage {
  const texts: string[] = [];
  const images: string[] = [];
  contentParts(content).forEach((part: ChatContentPart, j) => {
    const partParam = `${param}.content[${j}]`;
    if (part.type === 'text' && typeof part.text === 'string') texts.push(part.text);
    else if (part.type === 'image_url') images.push(imageBase64(part, `${partParam}.image_url`, provider));
    else throw unsupportedParameter(partParam, provider, `only text and image parts can be translated, not "${part.type}"`);
  });
  const out: OllamaMessage = { role: 'user', content: texts.join('\n') };
  if (images.length > 0) out.images = images;
  return out;
}

function imageBase64(part: ChatContentPart, param: string, provider: string): string {
  const url = (part as { image_url?: { url?: unknown } }).image_url?.url;
  const dataUrl = typeof url === 'string' ? parseDataUrl(url) : null;
  if (dataUrl && dataUrl.mediaType.startsWith('image/')) return dataUrl.data;
  if (typeof url === 'string' && /^https?:/i.test(url)) {
    throw unsupportedParameter(param, provider, 'Ollama takes images inline and the gateway does not fetch URLs; send a base64 data URL');
  }
  throw unsupportedParameter(param, provider, 'expected a base64 data URL of an image ("data:image/png;base64,...")');
}

function toOllamaAssistantMessage(message: ChatMessage, param: string, provider: string, toolNames: Map<string, string>): OllamaMessage {
  const out: OllamaMessage = { role: 'assistant', content: contentText(message.content, `${param}.content`, provider) };
  const calls = message.tool_calls ?? [];
  if (calls.length > 0) {
    out.tool_calls = calls.map((call: ChatToolCall, k) => {
      toolNames.set(call.id, call.function.name);
      const args = parseToolArguments(call.function.arguments, `${param}.tool_calls[${k}].function.arguments`);
      return { function: { name: call.function.name, arguments: args } };
    });
  }
  return out;
}
