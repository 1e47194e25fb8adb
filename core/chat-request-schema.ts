/**
 * JSON Schema of `POST /v1/chat/completions` bodies, following OpenAI's API reference
 * (openai-node `ChatCompletionCreateParamsBase`; shared/reference/provider-wire-formats.md §1.1).
 * It checks what the gateway and providers rely on and lets every other field through untouched.
 * The same schema will feed the OpenAPI document.
 */
import type { JsonSchema } from './json-schema.ts';

const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: 'null' }] });

const contentPart: JsonSchema = {
  type: 'object',
  required: ['type'],
  properties: {
    type: { type: 'string', description: '"text", "image_url", or a type a provider may support.' },
    text: { type: 'string' },
    image_url: {
      type: 'object',
      required: ['url'],
      properties: { url: { type: 'string', description: 'An http(s) URL or a data URL ("data:image/png;base64,...").' }, detail: { enum: ['auto', 'low', 'high'] } },
    },
  },
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
    name: { type: 'string' },
    tool_calls: { type: 'array', items: toolCall },
    tool_call_id: { type: 'string' },
  },
};

export const chatCompletionRequestSchema: JsonSchema = {
  type: 'object',
  required: ['model', 'messages'],
  properties: {
    model: { type: 'string', minLength: 1, description: '"provider/model" (e.g. "openai/gpt-4o-mini") or a bare model id resolved through the catalog.' },
    messages: { type: 'array', minItems: 1, items: message },
    stream: nullable({ type: 'boolean' }),
    stream_options: nullable({
      type: 'object',
      properties: { include_usage: nullable({ type: 'boolean' }) },
    }),
    max_tokens: nullable({ type: 'integer', minimum: 1 }),
    max_completion_tokens: nullable({ type: 'integer', minimum: 1 }),
    temperature: nullable({ type: 'number', minimum: 0, maximum: 2 }),
    top_p: nullable({ type: 'number', minimum: 0, maximum: 1 }),
    n: nullable({ type: 'integer', minimum: 1, maximum: 128 }),
    stop: nullable({ anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, maxItems: 4 }] }),
    seed: nullable({ type: 'integer' }),
    presence_penalty: nullable({ type: 'number', minimum: -2, maximum: 2 }),
    frequency_penalty: nullable({ type: 'number', minimum: -2, maximum: 2 }),
    tools: { type: 'array', items: tool },
    tool_choice: { anyOf: [{ type: 'string' }, { type: 'object' }] },
    response_format: { type: 'object', required: ['type'], properties: { type: { type: 'string' } } },
    user: { type: 'string' },
  },
};
