/**
 * JSON Schema of `POST /v1/responses` bodies, following openai-node's `ResponseCreateParamsBase`
 * (`src/resources/responses/responses.ts`) and https://platform.openai.com/docs/api-reference/responses/create .
 * It checks what the gateway reads and lets every other field through (`additionalProperties` stays
 * open): on a native pass-through the client's body reaches OpenAI untouched, so new item kinds, tools
 * and fields must not be refused here. Item- and tool-specific rules (which parts a role may hold,
 * built-in tools, stored items) are checked by `to-canonical.ts`, which names the field in a clearer
 * message than a schema error. The same schema feeds the OpenAPI document through the route declaration.
 */
import type { JsonSchema } from '../../json-schema.ts';
import { modelField } from '../model-field.ts';

const nullable = (type: string, description: string, extra: Partial<JsonSchema> = {}): JsonSchema =>
  ({ type: [type, 'null'], description, ...extra });

/** A content part of a message item, or of a function call's output. */
const contentPart: JsonSchema = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { type: 'string', description: '"input_text", "input_image", "input_file"; in replayed assistant messages "output_text" or "refusal".' },
    text: { type: 'string', description: 'The text of an "input_text" or "output_text" part.' },
    image_url: { type: ['string', 'null'], description: 'An "input_image": an http(s) URL or a data URL ("data:image/png;base64,...").' },
    file_id: { type: ['string', 'null'], description: 'An "input_image" or "input_file" uploaded to OpenAI\'s Files API (native OpenAI upstreams only).' },
    detail: { type: ['string', 'null'], description: 'Image detail: "low", "high", "auto" (or "original").' },
    refusal: { type: 'string', description: 'The text of a "refusal" part.' },
  },
};

/** Any input item: the fields of the kinds the gateway translates are typed wherever they appear. */
const inputItem: JsonSchema = {
  type: 'object',
  properties: {
    type: {
      type: 'string',
      description: '"message" (may be left out when "role" is set), "function_call", "function_call_output", "reasoning", or an item only a native upstream understands ("item_reference", built-in tool calls such as "web_search_call").',
    },
    role: { enum: ['user', 'assistant', 'system', 'developer'], description: 'Author of a message item; "developer" and "system" act as system prompts.' },
    content: { type: ['string', 'array'], items: contentPart, description: 'A message\'s text, or an array of content parts.' },
    call_id: { type: 'string', description: 'The call a "function_call" makes or a "function_call_output" answers.' },
    name: { type: 'string', description: 'The function a "function_call" calls.' },
    arguments: { type: 'string', description: 'The arguments of a "function_call", as a JSON string.' },
    output: { type: ['string', 'array'], items: contentPart, description: 'The result of a "function_call_output": a string or content parts.' },
  },
};

const tool: JsonSchema = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { type: 'string', description: '"function", or a built-in tool that runs at OpenAI ("web_search", "file_search", "code_interpreter", "mcp", ...; native OpenAI upstreams only).' },
    name: { type: 'string', minLength: 1, description: 'The function\'s name, as the model will call it.' },
    description: { type: ['string', 'null'], description: 'What the function does, for the model.' },
    parameters: { type: ['object', 'null'], description: 'JSON Schema of the function\'s arguments.' },
    strict: { type: ['boolean', 'null'], description: 'true: the arguments must match the schema exactly.' },
  },
};

const textFormat: JsonSchema = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { enum: ['text', 'json_object', 'json_schema'], description: '"text" (the default), "json_object", or "json_schema" (with name and schema).' },
    name: { type: 'string', description: 'The schema\'s name ("json_schema").' },
    schema: { type: 'object', description: 'The JSON Schema the answer must match ("json_schema").' },
    strict: { type: ['boolean', 'null'], description: 'true: the answer must match the schema exactly.' },
    description: { type: 'string', description: 'What the answer is for, for the model.' },
  },
};

export const responsesRequestSchema: JsonSchema = {
  type: 'object',
  required: ['model'],
  additionalProperties: true,
  properties: {
    model: modelField('openai/gpt-5-mini'),
    input: {
      type: ['string', 'array'],
      items: inputItem,
      description: 'A user message as a string, or the conversation as input items, oldest first.',
    },
    instructions: nullable('string', 'The system prompt, placed before the input.'),
    tools: { type: 'array', items: tool, description: 'Tools the model may call.' },
    tool_choice: {
      anyOf: [{ enum: ['auto', 'none', 'required'] }, { type: 'object', required: ['type'], properties: { type: { type: 'string', description: '"function" (other kinds need a native OpenAI upstream).' }, name: { type: 'string', description: 'The function to call.' } } }],
      description: '"auto", "none", "required", or {"type":"function","name"} to force one function.',
    },
    parallel_tool_calls: nullable('boolean', 'false: at most one function call per turn.'),
    max_output_tokens: nullable('integer', 'Upper bound on generated tokens, reasoning included. Also sizes the budget and token-limit reservation.', { minimum: 1 }),
    temperature: nullable('number', 'Sampling temperature, 0 to 2.', { minimum: 0, maximum: 2 }),
    top_p: nullable('number', 'Nucleus sampling: only tokens within this probability mass are considered.', { minimum: 0, maximum: 1 }),
    reasoning: nullable('object', 'Reasoning options: "effort" ("none", "minimal", "low", "medium", "high", ...) is passed on as reasoning_effort; "summary" only to native OpenAI upstreams.', {
      properties: { effort: { type: ['string', 'null'], description: 'How hard the model thinks.' }, summary: { type: ['string', 'null'], description: 'Whether and how to summarize the reasoning.' } },
    }),
    text: {
      type: 'object',
      properties: { format: { ...textFormat, description: 'The answer\'s format: text, a JSON object, or JSON matching a schema.' }, verbosity: { type: ['string', 'null'], description: '"low", "medium" or "high" (native OpenAI upstreams only).' } },
      description: 'Output format options.',
    },
    stream: nullable('boolean', 'true: answer as server-sent Responses events (response.created ... response.completed).'),
    previous_response_id: nullable('string', 'Continue from a response the gateway stored for you (any provider): its conversation (inputs and outputs, not its instructions) comes before this input.'),
    store: nullable('boolean', 'false: the gateway keeps nothing of this response (default true: kept for the retention period, for previous_response_id and GET /api/v1/responses/{id}).'),
    metadata: nullable('object', 'Key-value pairs attached to the response (native OpenAI upstreams only).'),
    user: { type: 'string', description: 'Your end user\'s id (native OpenAI upstreams only; prefer safety_identifier).' },
  },
};
