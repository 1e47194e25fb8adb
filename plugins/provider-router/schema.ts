import type { JsonSchema } from '../../core/json-schema.ts';
import type { ProviderSettings } from './providers/base.ts';
import { providerTypes } from './providers/index.ts';

export interface ProviderRouterConfig {
  providers: Record<string, ProviderSettings>;
  /** Model names clients may use, each mapped to `provider/model`. */
  models: Record<string, string>;
  catalogTtlMs: number;
}

export const providerRouterSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    providers: {
      type: 'object',
      description: 'Upstream providers by id; the id is the model prefix clients use ("openai/gpt-4o-mini").',
      default: {},
      propertyNames: { pattern: '^[a-z0-9][a-z0-9_-]*$' },
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['type', 'baseUrl'],
        properties: {
          type: { enum: [...providerTypes.keys()], description: 'Which implementation speaks to this upstream.' },
          baseUrl: {
            type: 'string', pattern: '^https?://',
            description: 'Base URL as the provider documents it: "https://api.openai.com/v1", "https://api.anthropic.com", "https://generativelanguage.googleapis.com/v1beta", "https://api.mistral.ai/v1", "http://127.0.0.1:11434"; an OpenAI-compatible server\'s URL up to "/v1".',
          },
          nativeDialects: {
            type: 'array',
            items: { enum: ['openai-responses'] },
            description: 'For "openai-compatible": the dialects the server also serves natively besides Chat Completions (["openai-responses"] when it has /v1/responses); those requests are passed through instead of translated.',
          },
          apiKey: { type: 'string', default: '', description: 'Shared API key; "" = none (users may bring their own with `tollgate credentials set`). Use "${NAME}" to read it from the environment.' },
        },
      },
    },
    models: {
      type: 'object',
      default: {},
      description: 'Model names clients may ask for, each mapped to a provider\'s model ("claude-sonnet-4-5": "openai/gpt-5" runs Claude Code on OpenAI). A name here wins over the catalog.',
      additionalProperties: { type: 'string', pattern: '^[a-z0-9][a-z0-9_-]*/.+', description: 'The model it means, as "provider/model".' },
    },
    catalogTtlMs: {
      type: 'integer', minimum: 1_000, default: 300_000,
      description: 'How long a discovered model list is fresh, in ms; a stale list is still served when a refresh fails.',
    },
  },
};
