/**
 * The OpenAI Responses API shapes the `openai-responses` dialect reads and writes: the
 * `POST /v1/responses` request and its input items, the `response` object, its output items, usage,
 * and the stream events. Only the fields the gateway reads or writes are typed; index signatures let
 * every other field through, because a native OpenAI upstream receives the client's body untouched.
 *
 * Sources: openai-node `src/resources/responses/responses.ts` (the authority here; type names below
 * follow its `ResponseCreateParamsBase`, `ResponseInputItem`, `Response`, `ResponseOutputItem`,
 * `ResponseStreamEvent`), https://platform.openai.com/docs/api-reference/responses/create ,
 * https://platform.openai.com/docs/api-reference/responses-streaming .
 */

/** A part of an input message's `content` (`ResponseInputContent`, plus assistant history parts). */
export type InputContentPart =
  | { type: 'input_text'; text: string; [field: string]: unknown }
  | { type: 'input_image'; image_url?: string | null; file_id?: string | null; detail?: string | null; [field: string]: unknown }
  | { type: 'input_file'; [field: string]: unknown }
  | { type: 'output_text'; text: string; [field: string]: unknown }
  | { type: 'refusal'; refusal: string; [field: string]: unknown }
  | { type: string; [field: string]: unknown };

/**
 * A message item (`EasyInputMessage`, `ResponseInputItem.Message`, or a replayed
 * `ResponseOutputMessage`): `type` may be absent, the role tells who wrote it.
 */
export interface InputMessageItem {
  type?: 'message';
  role: 'user' | 'assistant' | 'system' | 'developer';
  content: string | InputContentPart[];
  [field: string]: unknown;
}

/** A function call the model made, replayed by the client (`ResponseFunctionToolCall`). */
export interface FunctionCallItem {
  type: 'function_call';
  call_id: string;
  name: string;
  /** The arguments as a JSON string. */
  arguments: string;
  id?: string;
  [field: string]: unknown;
}

/** The client's result of a function call (`ResponseInputItem.FunctionCallOutput`). */
export interface FunctionCallOutputItem {
  type: 'function_call_output';
  call_id: string;
  output: string | InputContentPart[];
  [field: string]: unknown;
}

/** Any item of `input`; built-in tool calls, `reasoning`, `item_reference` etc. are typed loosely. */
export type InputItem = InputMessageItem | FunctionCallItem | FunctionCallOutputItem | { type: string; [field: string]: unknown };

/** A tool: `function` is the only kind the canonical form carries; the rest run at OpenAI. */
export interface FunctionToolParam {
  type: 'function';
  name: string;
  description?: string | null;
  parameters?: Record<string, unknown> | null;
  strict?: boolean | null;
  [field: string]: unknown;
}
export type ToolParam = FunctionToolParam | { type: string; [field: string]: unknown };

export type ToolChoiceParam = 'auto' | 'none' | 'required' | { type: string; name?: string; [field: string]: unknown };

/** `text.format`: plain text, a JSON object, or JSON matching a schema (`ResponseFormatTextConfig`). */
export type TextFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean | null; description?: string }
  | { type: string; [field: string]: unknown };

/** `POST /v1/responses` body (`ResponseCreateParamsBase`), as the dialect's schema validated it. */
export interface ResponseCreateParams {
  model: string;
  input?: string | InputItem[];
  instructions?: string | null;
  tools?: ToolParam[];
  tool_choice?: ToolChoiceParam;
  parallel_tool_calls?: boolean | null;
  max_output_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  reasoning?: { effort?: string | null; summary?: string | null; [field: string]: unknown } | null;
  text?: { format?: TextFormat; verbosity?: string | null; [field: string]: unknown } | null;
  stream?: boolean | null;
  previous_response_id?: string | null;
  store?: boolean | null;
  [field: string]: unknown;
}

/** `response.status` (`ResponseStatus`). */
export type ResponseStatus = 'completed' | 'failed' | 'in_progress' | 'cancelled' | 'queued' | 'incomplete';

/** `output_text` content of a message item; the gateway never has annotations or logprobs to give. */
export interface OutputText {
  type: 'output_text';
  text: string;
  annotations: never[];
  logprobs: never[];
}

/** An assistant message (`ResponseOutputMessage`). */
export interface OutputMessage {
  id: string;
  type: 'message';
  status: 'in_progress' | 'completed' | 'incomplete';
  role: 'assistant';
  content: OutputText[];
}

/** A function call the model makes (`ResponseFunctionToolCall`); `call_id` is what the output answers. */
export interface OutputFunctionCall {
  id: string;
  type: 'function_call';
  status: 'in_progress' | 'completed' | 'incomplete';
  arguments: string;
  call_id: string;
  name: string;
  /** The namespace of a namespaced tool's call. */
  namespace?: string;
}

export interface SummaryText {
  type: 'summary_text';
  text: string;
}

/** Reasoning (`ResponseReasoningItem`): the upstream's reasoning text as one summary part. */
export interface OutputReasoning {
  id: string;
  type: 'reasoning';
  summary: SummaryText[];
}

export type OutputItem = OutputMessage | OutputFunctionCall | OutputReasoning;

/** `ResponseUsage`: unlike Anthropic's, `input_tokens` INCLUDES the cached tokens (as OpenAI's prompt_tokens). */
export interface ResponseUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** The `response` object (`Response`): the answer, and the snapshot every lifecycle event carries. */
export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: ResponseStatus;
  completed_at?: number | null;
  error: { code: string; message: string } | null;
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  instructions: unknown;
  max_output_tokens: number | null;
  model: string;
  output: OutputItem[];
  /** The SDKs' convenience field (openai-node adds it itself): every `output_text` joined. */
  output_text: string;
  parallel_tool_calls: boolean;
  previous_response_id: string | null;
  reasoning: unknown;
  /** Whether the response is stored (for `previous_response_id` and `GET /v1/responses/{id}`). */
  store: boolean;
  temperature: number | null;
  text: unknown;
  tool_choice: unknown;
  tools: unknown[];
  top_p: number | null;
  truncation: unknown;
  usage: ResponseUsage | null;
  metadata: unknown;
  [field: string]: unknown;
}

/** The mid-stream `error` event: OpenAI's `{code, message, param}` plus its nested `error` (see render.ts). */
export interface ResponseErrorEvent {
  type: 'error';
  code: string;
  message: string;
  param: string | null;
  error: { type: string; code: string; message: string; param: string | null };
}
