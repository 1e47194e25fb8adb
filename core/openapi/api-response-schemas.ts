/**
 * JSON Schemas (2020-12, as OpenAPI 3.1 uses them) of the bodies the `/api` endpoints answer with,
 * for the OpenAPI document (`openapi.ts`). Request bodies are NOT here: they come from the validators'
 * own schemas, and the views plugins answer with are declared by those plugins with their routes.
 * Shapes follow OpenAI's API reference (openai-node `ChatCompletion`, `ChatCompletionChunk`). Token
 * counts are integers, times are Unix seconds.
 * Objects that mirror an upstream's answer leave `additionalProperties` open: providers add fields
 * and the gateway passes them through.
 */
import type { JsonSchema } from '../json-schema.ts';
import { int, object, ref, str } from './openapi-schema.ts';

const errorSchema = object('The body of every error response (docs/contract.md "Errors").', {
  error: object('What went wrong.', {
    message: str('What happened and what to do about it. Never contains secrets or other users\' data.'),
    type: str('OpenAI-style error class, e.g. `invalid_request_error`, `authentication_error`, `rate_limit_error`, `budget_exceeded`, `upstream_error`, `server_error`.'),
    code: str('Stable machine-readable code, e.g. `invalid_api_key`, `rate_limit_exceeded`, `model_not_found`, `internal_error`; for upstream errors the provider\'s own code when it has one.'),
    param: { type: ['string', 'null'], description: 'The request field at fault in dotted form (`messages[0].role`), or null.' },
  }),
});

const usage = object('Token counts of the request, as the upstream reported them (or counted locally when it did not).', {
  prompt_tokens: int('Input tokens, cached and cache-write tokens included.'),
  completion_tokens: int('Output tokens, reasoning tokens included.'),
  total_tokens: int('prompt_tokens + completion_tokens.'),
}, {
  prompt_tokens_details: {
    type: ['object', 'null'],
    description: 'Parts of prompt_tokens billed at other rates.',
    properties: {
      cached_tokens: int('Input tokens read from the provider\'s prompt cache (billed at the cached rate); part of prompt_tokens.'),
      cache_write_tokens: int('Input tokens written to the provider\'s prompt cache (billed at the cache-write rate); part of prompt_tokens.'),
    },
  },
  completion_tokens_details: {
    type: ['object', 'null'],
    description: 'Parts of completion_tokens.',
    properties: { reasoning_tokens: int('Tokens the model spent reasoning; part of completion_tokens.') },
  },
});

const toolCall = object('A function call the model asks for.', {
  id: str('Call id; send it back as the tool message\'s tool_call_id.'),
  type: { const: 'function', description: 'Always `function`.' },
  function: object('The function and its arguments.', {
    name: str('Function name.'),
    arguments: str('The arguments as a JSON string (may be invalid JSON: validate before use).'),
  }),
});

const finishReason: JsonSchema = {
  type: ['string', 'null'],
  description: 'Why generation stopped: `stop`, `length` (max tokens reached), `tool_calls`, `content_filter`; null while a stream is still running.',
};

const chatCompletion = object('A chat completion (`stream` false or absent).', {
  id: str('Completion id.'),
  object: { const: 'chat.completion', description: 'Always `chat.completion`.' },
  created: int('When the completion was created (Unix seconds).'),
  model: str('The model that answered, as the upstream names it.'),
  choices: {
    type: 'array',
    description: 'One entry per requested choice (`n`).',
    items: object('One answer.', {
      index: int('Position in `choices`.'),
      message: {
        type: 'object',
        description: 'The assistant\'s message.',
        required: ['role', 'content'],
        properties: {
          role: { const: 'assistant', description: 'Always `assistant`.' },
          content: { type: ['string', 'null'], description: 'The answer text; null when the model only called tools.' },
          refusal: { type: ['string', 'null'], description: 'The model\'s refusal message, when it refused.' },
          tool_calls: { type: 'array', description: 'Function calls the model asks for.', items: toolCall },
        },
      },
      finish_reason: finishReason,
    }),
  },
}, {
  usage: { anyOf: [ref('Usage'), { type: 'null' }], description: 'Token counts of the request.' },
  system_fingerprint: { type: ['string', 'null'], description: 'Backend configuration fingerprint, when the upstream reports one.' },
});

const chunkToolCall: JsonSchema = {
  type: 'object',
  description: 'A fragment of a tool call; fragments with the same `index` belong to one call.',
  required: ['index'],
  properties: {
    index: int('Which tool call this fragment belongs to.'),
    id: str('Call id (first fragment only).'),
    type: { const: 'function', description: 'Always `function` (first fragment only).' },
    function: {
      type: 'object',
      description: 'Name (first fragment) and a piece of the JSON arguments string.',
      properties: { name: str('Function name.'), arguments: str('The next piece of the arguments JSON string.') },
    },
  },
};

const chatCompletionChunk = object('One server-sent event of a streamed chat completion.', {
  id: str('Completion id, the same on every chunk.'),
  object: { const: 'chat.completion.chunk', description: 'Always `chat.completion.chunk`.' },
  created: int('When the completion was created (Unix seconds).'),
  model: str('The model that answers.'),
  choices: {
    type: 'array',
    description: 'Deltas per choice; empty on the final usage chunk.',
    items: object('The next piece of one choice.', {
      index: int('Position of the choice.'),
      delta: {
        type: 'object',
        description: 'What to append to the message.',
        properties: {
          role: { const: 'assistant', description: 'Set on the first chunk only.' },
          content: { type: ['string', 'null'], description: 'The next piece of the answer text.' },
          refusal: { type: ['string', 'null'], description: 'The next piece of a refusal message.' },
          tool_calls: { type: 'array', description: 'Tool-call fragments.', items: chunkToolCall },
        },
      },
      finish_reason: finishReason,
    }),
  },
}, {
  usage: {
    anyOf: [ref('Usage'), { type: 'null' }],
    description: 'Token counts, on the last chunk (with empty `choices`) when the request set `stream_options.include_usage`.',
  },
});

/** Component schemas every dialect and endpoint may name (errors, usage, chat answers). */
export const responseSchemas: Record<string, JsonSchema> = {
  Error: errorSchema,
  Usage: usage,
  ChatCompletion: chatCompletion,
  ChatCompletionChunk: chatCompletionChunk,
};
