/** Component schemas of provider-router's endpoints (`routes.ts`): model lists and the provider view (`api-views.ts`). */
import type { JsonSchema } from '../../core/json-schema.ts';
import { int, list, nullableUsd, object, ref, str } from '../../core/openapi/openapi-schema.ts';

const openAIModel = object('A model in OpenAI\'s list shape, with the fields Anthropic\'s list has.', {
  id: str('`provider/model`, or a model name from the manifest: what to pass as `model`.'),
  object: { const: 'model', description: 'Always `model` (OpenAI).' },
  created: int('When the provider published the model (Unix seconds; 0 when it does not say).'),
  owned_by: str('Owner as the provider reports it.'),
  type: { const: 'model', description: 'Always `model` (Anthropic).' },
  display_name: str('Human-readable model name.'),
  created_at: { type: 'string', format: 'date-time', description: '`created` as ISO 8601 (Anthropic).' },
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

const provider = object('One provider and whether the caller can use it.', {
  id: str('Provider id, the `provider/` prefix of model ids.'),
  object: { const: 'provider', description: 'Always `provider`.' },
  name: str('Human-readable provider name.'),
  configured: { type: 'boolean', description: 'Whether a credential exists for the caller (their own or the shared one).' },
  credential_source: { enum: ['user', 'shared', null], description: '`user`: the caller\'s own credential; `shared`: the gateway\'s; null when not configured.' },
  models: { type: 'array', description: 'The provider\'s models; empty when listing them failed (the server log says why).', items: ref('Model') },
});

export const providerRouterSchemas: Record<string, JsonSchema> = {
  OpenAIModel: openAIModel,
  OpenAIModelList: object('The model list in a shape both the OpenAI and the Anthropic SDK accept.', {
    object: { const: 'list', description: 'Always `list`.' },
    data: { type: 'array', description: 'The models.', items: ref('OpenAIModel') },
    has_more: { type: 'boolean', description: 'Always false: every model is on this one page (Anthropic paging).' },
    first_id: { type: ['string', 'null'], description: 'The first model\'s id (Anthropic paging).' },
    last_id: { type: ['string', 'null'], description: 'The last model\'s id (Anthropic paging).' },
  }),
  Model: modelView,
  ModelList: list('Every model the gateway can route to, with display names and prices.', 'Model'),
  Provider: provider,
};
