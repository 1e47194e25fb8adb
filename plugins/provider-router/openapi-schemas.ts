/** Component schemas of provider-router's endpoints (`routes.ts`): model lists and the provider view (`api-views.ts`). */
import type { JsonSchema } from '../../core/json-schema.ts';
import { int, list, nullableUsd, object, ref, str } from '../../core/openapi-schema.ts';

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
  OpenAIModelList: list('OpenAI-compatible model list.', 'OpenAIModel'),
  Model: modelView,
  ModelList: list('Every model the gateway can route to, with display names and prices.', 'Model'),
  Provider: provider,
};
