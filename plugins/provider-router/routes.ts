/**
 * The endpoints provider-router answers from the discovered catalog, with their OpenAPI description:
 * `GET /api/v1/models` (OpenAI's list shape), `GET /api/models` (display names and prices) and
 * `GET /api/providers/{provider}`.
 */
import { MODELS_RETRIEVE, type RouteDeclaration, type RouteDoc } from '../../core/routes.ts';
import { jsonOk } from '../../core/openapi/openapi-errors.ts';
import { providerRouterSchemas } from './openapi-schemas.ts';

const MODELS_TAG = { name: 'Models', description: 'Models and providers the gateway can route to.' };

const listModelsDoc: RouteDoc = {
  operationId: 'listModels', tag: MODELS_TAG,
  summary: 'List models (OpenAI format)',
  description: 'Every model of every provider as `provider/model` ids, in OpenAI\'s list shape, so OpenAI SDKs and tools can discover them.',
  success: jsonOk('Every model of every provider, each `id` being `provider/model`.', 'OpenAIModelList'),
  errors: {},
  schemas: providerRouterSchemas,
};

const retrieveModelDoc: RouteDoc = {
  operationId: 'retrieveModel', tag: MODELS_TAG,
  summary: 'Retrieve a model (OpenAI format)',
  description: 'One entry of `GET /v1/models` (OpenAI\'s `models.retrieve`). The id is `provider/model` (its slash sent raw or as `%2F`), a model name from the manifest, or a bare model id that exactly one provider lists. Takes one request of the caller\'s requests-per-minute limit and a concurrency slot, and is logged (operation `models.retrieve`, cost 0).',
  parameters: [{ name: 'model', in: 'path', required: true, description: 'Model id, e.g. `openai/gpt-4o-mini`.', schema: { type: 'string' } }],
  success: jsonOk('The model, in OpenAI\'s shape (with Anthropic\'s `type`, `display_name`, `created_at`).', 'OpenAIModel'),
  errors: {
    400: {
      when: 'A bare model id that several providers list (`invalid_request`); the message names each `provider/model`.',
      example: { code: 'invalid_request', message: 'The model "llama3" is offered by several providers: ollama/llama3, groq/llama3. Name one.', param: 'model' },
    },
    404: {
      when: 'No provider lists this model (`model_not_found`).',
      example: { code: 'model_not_found', message: 'The model "gpt-5-turbo" does not exist or is not available. GET /api/v1/models lists the models you can use.', param: 'model' },
    },
    429: 'The caller\'s requests-per-minute limit is spent (`rate_limit_exceeded`), or it has too many requests in flight (`concurrency_limit_exceeded`); retry after `Retry-After` seconds.',
  },
  schemas: providerRouterSchemas,
};

const listModelCatalogDoc: RouteDoc = {
  operationId: 'listModelCatalog', tag: MODELS_TAG,
  summary: 'List models with display names and prices',
  description: 'Every model the gateway can route to, with a human-readable name and its per-1,000-token prices in USD (null when unpriced).',
  success: jsonOk('Every model with its display name and per-1,000-token prices (USD).', 'ModelList'),
  errors: {},
};

const getProviderDoc: RouteDoc = {
  operationId: 'getProvider', tag: MODELS_TAG,
  summary: 'Describe one provider',
  description: 'The provider, whether the caller can use it and with whose credential (their own or the shared one), and its models.',
  parameters: [{ name: 'provider', in: 'path', required: true, description: 'Provider id, e.g. `openai`, `anthropic`, or one declared in the manifest.', schema: { type: 'string' } }],
  success: jsonOk('The provider, whether the caller can use it, and its models.', 'Provider'),
  errors: {
    404: {
      when: 'No provider has this id (`provider_not_found`); the message lists the known providers.',
      example: { code: 'provider_not_found', message: 'Unknown provider "acme". Known providers: openai, anthropic, gemini, mistral, ollama.', param: null },
    },
  },
};

export const providerRouterRoutes: readonly RouteDeclaration[] = [
  { method: 'GET', path: '/api/v1/models', operation: 'models.list', doc: listModelsDoc },
  { method: 'GET', path: '/api/v1/models/{model+}', operation: MODELS_RETRIEVE, doc: retrieveModelDoc },
  { method: 'GET', path: '/api/models', operation: 'models.catalog', doc: listModelCatalogDoc },
  { method: 'GET', path: '/api/providers/{provider}', operation: 'providers.get', doc: getProviderDoc },
];
