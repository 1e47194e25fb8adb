/**
 * The Anthropic Messages API shapes the `anthropic-messages` dialect reads and writes: the
 * `POST /v1/messages` request, content blocks, the `message` response, stream events, usage and the
 * error body. Only the fields the gateway reads or writes are typed; index signatures let every other
 * field through, because a native upstream receives the client's body untouched.
 *
 * Sources: docs/provider-wire-formats.md §2 (2.2 request, 2.3 response, 2.4 streaming, 2.6 errors);
 * https://platform.claude.com/docs/en/api/messages , https://platform.claude.com/docs/en/build-with-claude/streaming ,
 * https://platform.claude.com/docs/en/api/errors ; `@anthropic-ai/sdk` `src/resources/messages/messages.ts`
 * and `src/resources/shared.ts` (type names below follow the SDK's where it has one).
 */

/** `cache_control` on a block: a prompt-caching hint, meaningless to the canonical form (dropped there). */
export interface CacheControl {
  type: 'ephemeral';
  ttl?: string;
  [field: string]: unknown;
}

/** `{"type":"text","text"}`; `citations` may ride along. */
export interface TextBlockParam {
  type: 'text';
  text: string;
  cache_control?: CacheControl | null;
  [field: string]: unknown;
}

/** An image: inline base64 or a URL Anthropic fetches (`file` sources need the Files API beta). */
export interface ImageBlockParam {
  type: 'image';
  source:
    | { type: 'base64'; media_type: string; data: string; [field: string]: unknown }
    | { type: 'url'; url: string; [field: string]: unknown }
    | { type: string; [field: string]: unknown };
  cache_control?: CacheControl | null;
  [field: string]: unknown;
}

/** An assistant's tool call; `input` is the arguments object (not a JSON string, unlike OpenAI). */
export interface ToolUseBlockParam {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
  [field: string]: unknown;
}

/** The answer to a `tool_use`, sent in the next user turn. */
export interface ToolResultBlockParam {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | Array<TextBlockParam | ImageBlockParam | { type: string; [field: string]: unknown }>;
  is_error?: boolean;
  [field: string]: unknown;
}

/** Extended-thinking output replayed by the client (with its signature) in later assistant turns. */
export interface ThinkingBlockParam {
  type: 'thinking';
  thinking: string;
  signature: string;
  [field: string]: unknown;
}

export interface RedactedThinkingBlockParam {
  type: 'redacted_thinking';
  data: string;
  [field: string]: unknown;
}

/** A block of a request message; unknown kinds (`document`, server-tool results) are typed loosely. */
export type ContentBlockParam =
  | TextBlockParam
  | ImageBlockParam
  | ToolUseBlockParam
  | ToolResultBlockParam
  | ThinkingBlockParam
  | RedactedThinkingBlockParam
  | { type: string; [field: string]: unknown };

/**
 * One entry of `messages`. `system` is not in Anthropic's documented roles, but Claude Code sends
 * `role: "system"` entries inside `messages`, and the SDK's types allow them.
 */
export interface MessageParam {
  role: 'user' | 'assistant' | 'system';
  content: string | ContentBlockParam[];
  [field: string]: unknown;
}

/** A client tool (`type` absent or `custom`); any other `type` is a server tool Anthropic runs. */
export interface ToolParam {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
  type?: string | null;
  cache_control?: CacheControl | null;
  [field: string]: unknown;
}

export type ToolChoiceParam =
  | { type: 'auto' | 'any'; disable_parallel_tool_use?: boolean; [field: string]: unknown }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean; [field: string]: unknown }
  | { type: 'none'; [field: string]: unknown };

/** `thinking`: extended thinking with a token budget, or off (`adaptive` on the newest models). */
export interface ThinkingConfigParam {
  /** `enabled`, `disabled`, `adaptive`, or a newer type, passed on as it is. */
  type: string;
  budget_tokens?: number;
  [field: string]: unknown;
}

/** The fields `POST /v1/messages` and `POST /v1/messages/count_tokens` share. */
export interface MessageRequestBase {
  model: string;
  messages: MessageParam[];
  system?: string | TextBlockParam[];
  tools?: ToolParam[];
  tool_choice?: ToolChoiceParam;
  thinking?: ThinkingConfigParam;
  max_tokens?: number;
  stream?: boolean;
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  metadata?: { user_id?: string | null; [field: string]: unknown };
  [field: string]: unknown;
}

/** `POST /v1/messages` body: `max_tokens` is required. */
export interface MessageCreateParams extends MessageRequestBase {
  max_tokens: number;
}

/** `POST /v1/messages/count_tokens` body: the request without `max_tokens`. */
export type MessageCountTokensParams = MessageRequestBase;

/** Why the model stopped (`message.stop_reason`, `message_delta.delta.stop_reason`). */
export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal';

/**
 * Token counts. `input_tokens` EXCLUDES cache reads and cache writes (OpenAI's `prompt_tokens`
 * includes both): prompt = input + cache_read + cache_creation.
 */
export interface MessageUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
  [field: string]: unknown;
}

/** Blocks of an answer. `signature` of a thinking block is empty when the gateway made it up. */
export type ContentBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown };

/** A non-streamed answer, `type: "message"`. */
export interface Message {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ContentBlock[];
  stop_reason: StopReason | null;
  stop_sequence: string | null;
  usage: MessageUsage;
}

/** A content block as `content_block_start` opens it (text and input empty, filled by deltas). */
export type StartedContentBlock =
  | { type: 'text'; text: '' }
  | { type: 'thinking'; thinking: ''; signature: '' }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, never> };

export type ContentBlockDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'input_json_delta'; partial_json: string }
  | { type: 'thinking_delta'; thinking: string };

/** The named SSE events of a Messages stream (`event: <type>` carries the same name as `data.type`). */
export type MessageStreamEvent =
  | { type: 'message_start'; message: Message }
  | { type: 'content_block_start'; index: number; content_block: StartedContentBlock }
  | { type: 'content_block_delta'; index: number; delta: ContentBlockDelta }
  | { type: 'content_block_stop'; index: number }
  | { type: 'message_delta'; delta: { stop_reason: StopReason | null; stop_sequence: string | null }; usage: MessageUsage }
  | { type: 'message_stop' }
  | ErrorResponse;

/** `error.type` values Anthropic documents (https://platform.claude.com/docs/en/api/errors). */
export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'billing_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'timeout_error'
  | 'overloaded_error';

/** The error body, as a response body and as the `error` stream event. */
export interface ErrorResponse {
  type: 'error';
  error: { type: AnthropicErrorType; message: string };
}
