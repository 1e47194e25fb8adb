/**
 * JSON Schemas (2020-12, as OpenAPI 3.1 uses them) of the bodies the `/api` endpoints answer with,
 * for the OpenAPI document (`openapi.ts`). Request bodies are NOT here: they come from the validators'
 * own schemas. Shapes follow CONTRACT.md, OpenAI's API reference for the OpenAI-compatible ones
 * (openai-node `ChatCompletion`, `ChatCompletionChunk`, `Model`), and the views the plugins build
 * (the provider router's API views, the account and pricing plugins). Money is USD as a
 * decimal number, token counts are integers, times are Unix seconds or ISO 8601 as each field says.
 * Objects that mirror an upstream's answer leave `additionalProperties` open: providers add fields
 * and the gateway passes them through.
 */
import type { JsonSchema } from './json-schema.ts';

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });
const str = (description: string): JsonSchema => ({ type: 'string', description });
const int = (description: string): JsonSchema => ({ type: 'integer', minimum: 0, description });
const usd = (description: string): JsonSchema => ({ type: 'number', description: `${description} (USD).` });
const nullableUsd = (description: string): JsonSchema => ({ type: ['number', 'null'], description: `${description} (USD).` });
/** `schema` or null (2020-12: a "null" type added to `type`). */
const nullable = (schema: JsonSchema): JsonSchema => ({ ...schema, type: [schema.type as string, 'null'] });
/** An object whose `required` properties are listed first and `optional` ones after. */
const object = (description: string, required: Record<string, JsonSchema>, optional: Record<string, JsonSchema> = {}): JsonSchema => ({
  type: 'object', description, required: Object.keys(required), properties: { ...required, ...optional },
});

const errorSchema = object('The body of every error response (CONTRACT.md "Errors").', {
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

const openAIModel = object('A model in OpenAI\'s list shape.', {
  id: str('`provider/model`, what to pass as `model` in a chat completion.'),
  object: { const: 'model', description: 'Always `model`.' },
  created: int('When the provider published the model (Unix seconds; 0 when it does not say).'),
  owned_by: str('Owner as the provider reports it.'),
});

const price = (what: string, per: string): JsonSchema => nullableUsd(`Price of ${per} ${what}; null when the model has no price`);
const cachedPrice = nullableUsd('Price of 1,000 cached input tokens; null when the model has no price or no separate cached rate (cached tokens then cost the input rate)');

const modelView = object('A model the gateway can route to, with its display name and prices.', {
  id: str('`provider/model`, what to pass as `model` in a chat completion.'),
  object: { const: 'model', description: 'Always `model`.' },
  provider: str('Provider id (e.g. `openai`).'),
  model: str('Model id as the provider names it.'),
  display_name: str('Human-readable model name.'),
  created: int('When the provider published the model (Unix seconds; 0 when it does not say).'),
  owned_by: str('Owner as the provider reports it.'),
  input_price_per_1k: price('input tokens', '1,000'),
  output_price_per_1k: price('output tokens', '1,000'),
  cached_input_price_per_1k: cachedPrice,
});

const rateLimitState: JsonSchema = {
  type: ['object', 'null'],
  description: 'One per-minute limit and what is left of it; null when no such limit applies.',
  required: ['limit', 'remaining', 'reset_ms'],
  properties: {
    limit: int('Allowed per minute.'),
    remaining: int('Still available now.'),
    reset_ms: int('Milliseconds until the limit is fully replenished (0 = full now).'),
  },
};

const isoOrNull = (description: string): JsonSchema => ({ type: ['string', 'null'], format: 'date-time', description });

const account = object('The calling gateway user, its key, budget, rate limits and usage this budget period.', {
  object: { const: 'account', description: 'Always `account`.' },
  user: object('The gateway user that owns the key.', {
    id: int('User id.'),
    name: str('User name.'),
    email: { type: ['string', 'null'], description: 'Email address, if one was set.' },
  }),
  key: object('The API key the request used.', {
    id: int('Key id.'),
    name: { type: ['string', 'null'], description: 'The key\'s label, if one was set.' },
    prefix: { type: ['string', 'null'], description: 'The key\'s first characters, as key listings show them (never the whole key).' },
  }),
  budget: nullable(object('Spending limit and where the current period stands; null when the gateway runs without the budget plugin.', {
    limit_usd: nullableUsd('Budget per period; null = unlimited'),
    spent_usd: usd('Spent in the current period'),
    reserved_usd: usd('Held for requests still in flight (their worst-case cost)'),
    remaining_usd: nullableUsd('limit_usd − spent_usd − reserved_usd; null = unlimited'),
    period: { enum: ['daily', 'weekly', 'monthly', 'never'], description: 'Reset period, calendar-aligned in time_zone: daily at 00:00, weekly on Monday, monthly on the 1st; `never` never resets.' },
    period_start: isoOrNull('Start of the current period (ISO 8601); null when the budget never resets.'),
    resets_at: isoOrNull('When spending returns to zero (ISO 8601); null when the budget never resets.'),
    time_zone: str('IANA time zone the periods are aligned in (e.g. `UTC`, `Europe/Paris`).'),
  })),
  rate_limits: object('Per-minute limits (the tighter of the user\'s and the key\'s).', {
    requests: { ...rateLimitState, description: 'Requests per minute; null when unlimited.' },
    tokens: { ...rateLimitState, description: 'Tokens per minute; null when unlimited.' },
  }),
  usage: object('Usage in the current budget period.', {
    since: { type: 'string', format: 'date-time', description: 'Start of the period counted (ISO 8601): the current budget period\'s start (1970-01-01 for a budget that never resets, i.e. all time).' },
    requests: int('Requests made.'),
    prompt_tokens: int('Input tokens billed.'),
    completion_tokens: int('Output tokens billed.'),
    cost_usd: usd('Cost billed'),
  }),
});

const pricePer = (what: string, per: string, orNull: boolean): JsonSchema =>
  (orNull ? nullableUsd : usd)(`Price of ${per} ${what}${orNull ? '; null = no separate rate, these tokens cost the input rate' : ''}`);

const pricingRow = object('The price of one model.', {
  model: str('Model id the price applies to.'),
  provider: { type: ['string', 'null'], description: 'Provider id the price is for; null = any provider serving this model id.' },
  display_name: str('Human-readable model name.'),
  input_price_per_1k: pricePer('input tokens', '1,000', false),
  output_price_per_1k: pricePer('output tokens', '1,000', false),
  cached_input_price_per_1k: pricePer('cached input tokens', '1,000', true),
  cache_write_price_per_1k: pricePer('input tokens written to the prompt cache', '1,000', true),
  input_price_per_million: pricePer('input tokens', '1,000,000', false),
  output_price_per_million: pricePer('output tokens', '1,000,000', false),
  cached_input_price_per_million: pricePer('cached input tokens', '1,000,000', true),
  cache_write_price_per_million: pricePer('input tokens written to the prompt cache', '1,000,000', true),
  source: { enum: ['manual', 'import', 'free'], description: '`manual`: set by an admin or `tollgate pricing set` (always wins over imports); `import`: from the bundled price dataset; `free`: zero, for a provider the gateway treats as free (local models).' },
});

const provider = object('One provider and whether the caller can use it.', {
  id: str('Provider id, the `provider/` prefix of model ids.'),
  object: { const: 'provider', description: 'Always `provider`.' },
  name: str('Human-readable provider name.'),
  configured: { type: 'boolean', description: 'Whether a credential exists for the caller (their own or the shared one).' },
  credential_source: { enum: ['user', 'shared', null], description: '`user`: the caller\'s own credential; `shared`: the gateway\'s; null when not configured.' },
  models: { type: 'array', description: 'The provider\'s models; empty when listing them failed (the server log says why).', items: ref('Model') },
});

const list = (description: string, item: string): JsonSchema => object(description, {
  object: { const: 'list', description: 'Always `list`.' },
  data: { type: 'array', description: 'The entries.', items: ref(item) },
});

/** `components.schemas` of the OpenAPI document, except the request bodies. */
export const responseSchemas: Record<string, JsonSchema> = {
  Error: errorSchema,
  Usage: usage,
  ChatCompletion: chatCompletion,
  ChatCompletionChunk: chatCompletionChunk,
  OpenAIModel: openAIModel,
  OpenAIModelList: list('OpenAI-compatible model list.', 'OpenAIModel'),
  Model: modelView,
  ModelList: list('Every model the gateway can route to, with display names and prices.', 'Model'),
  Provider: provider,
  Account: account,
  PricingRow: pricingRow,
  PricingList: list('Every priced model. Per-1k prices are the stored per-million prices / 1000.', 'PricingRow'),
};
