/**
 * JSON Schema of `POST /v1/chat/completions` bodies, following OpenAI's API reference
 * (openai-node `ChatCompletionCreateParamsBase`; docs/provider-wire-formats.md §1.1).
 * It checks what the gateway and providers rely on and lets every other field through untouched.
 * The same schema feeds the OpenAPI document (`core/openapi/openapi.ts`, through the dialect's route declaration).
 */
import type { JsonSchema } from '../../json-schema.ts';
import { modelField } from '../model-field.ts';

const nullable = (schema: JsonSchema, description?: string): JsonSchema =>
  description === undefined ? { anyOf: [schema, { type: 'null' }] } : { anyOf: [schema, { type: 'null' }], description };

const imageUrl: JsonSchema = {
  type: 'object',
  required: ['url'],
  properties: { url: { type: 'string', description: 'An http(s) URL or a data URL ("data:image/png;base64,...").' }, detail: { enum: ['auto', 'low', 'high'] } },
};

const contentPart: JsonSchema = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { type: 'string', description: '"text", "image_url", or a type a provider may support.' },
    text: { type: 'string' },
    image_url: imageUrl,
  },
  // An image part without its image is refused here: every translator reads `image_url.url`.
  if: { properties: { type: { const: 'image_url' } } },
  then: { properties: { image_url: imageUrl }, required: ['image_url'] },
};

const toolCall: JsonSchema = {
  type: 'object',
  required: ['id', 'type', 'function'],
  properties: {
    id: { type: 'string' },
    type: { const: 'function' },
    function: {
      type: 'object',
      required: ['name', 'arguments'],
      properties: { name: { type: 'string' }, arguments: { type: 'string', description: 'The arguments as a JSON string.' } },
    },
  },
};

const tool: JsonSchema = {
  type: 'object',
  required: ['type', 'function'],
  properties: {
    type: { const: 'function' },
    function: {
      type: 'object',
      required: ['name'],
      properties: {
        name: { type: 'string', minLength: 1 },
        description: { type: 'string' },
        parameters: { type: 'object', description: 'JSON Schema of the arguments.' },
        strict: nullable({ type: 'boolean' }),
      },
    },
  },
};

const message: JsonSchema = {
  type: 'object',
  required: ['role'],
  properties: {
    role: { enum: ['developer', 'system', 'user', 'assistant', 'tool', 'function'], description: 'Author of the message.' },
    content: {
      description: 'A string, an array of content parts, or null (assistant messages with tool_calls).',
      anyOf: [{ type: 'string' }, { type: 'null' }, { type: 'array', items: contentPart }],
    },
    name: { type: 'string', description: 'Optional name of the participant, to tell same-role authors apart.' },
    tool_calls: { type: 'array', items: toolCall, description: 'Tool calls the assistant made (assistant messages).' },
    tool_call_id: { type: 'string', description: 'The tool call this message answers (tool messages).' },
  },
};

export const chatCompletionRequestSchema: JsonSchema = {
  type: 'object',
  required: ['model', 'messages'],
  properties: {
    model: modelField('openai/gpt-4o-mini'),
    messages: { type: 'array', minItems: 1, items: message, description: 'The conversation so far, oldest first.' },
    stream: nullable({ type: 'boolean' }, 'true: answer as server-sent `chat.completion.chunk` events ending in `data: [DONE]`.'),
    stream_options: nullable({
      type: 'object',
      properties: { include_usage: nullable({ type: 'boolean' }, 'Add a last chunk with `usage` (token counts) and `choices: []`.') },
    }, 'Streaming options (only with stream: true).'),
    max_tokens: nullable({ type: 'integer', minimum: 1 }, 'Upper bound on generated tokens (legacy name of max_completion_tokens). Also sizes the budget and token-limit reservation.'),
    max_completion_tokens: nullable({ type: 'integer', minimum: 1 }, 'Upper bound on generated tokens, reasoning included. Also sizes the budget and token-limit reservation.'),
    temperature: nullable({ type: 'number', minimum: 0, maximum: 2 }, 'Sampling temperature; providers with a narrower range clamp it.'),
    top_p: nullable({ type: 'number', minimum: 0, maximum: 1 }, 'Nucleus sampling: only tokens within this probability mass are considered.'),
    n: nullable({ type: 'integer', minimum: 1, maximum: 128 }, 'How many choices to generate; providers that cannot refuse n > 1 with a 400.'),
    stop: nullable({ anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, maxItems: 4 }] }, 'Up to 4 sequences where generation stops.'),
    seed: nullable({ type: 'integer' }, 'Best-effort deterministic sampling, where the provider supports it.'),
    presence_penalty: nullable({ type: 'number', minimum: -2, maximum: 2 }, 'Penalises tokens that already appeared, encouraging new topics.'),
    frequency_penalty: nullable({ type: 'number', minimum: -2, maximum: 2 }, 'Penalises tokens by how often they appeared, reducing repetition.'),
    tools: { type: 'array', items: tool, description: 'Functions the model may call.' },
    tool_choice: { anyOf: [{ type: 'string' }, { type: 'object' }], description: '"none", "auto", "required", or {type: "function", function: {name}} to force one.' },
    response_format: { type: 'object', required: ['type'], properties: { type: { type: 'string' } }, description: '{type: "json_object"} or {type: "json_schema", json_schema} for structured output, where the provider supports it.' },
    user: { type: 'string', description: 'Your end user\'s id, passed on where the provider accepts it.' },
  },
};
