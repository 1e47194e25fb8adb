import type { JsonSchema } from '../../core/json-schema.ts';
import type { ProviderSettings } from './providers/base.ts';
import { providerTypes } from './providers/index.ts';

export interface ProviderRouterConfig {
  providers: Record<string, ProviderSettings>;
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
          baseUrl: { type: 'string', pattern: '^https?://', description: 'Base URL including the version path, e.g. "https://api.openai.com/v1".' },
          apiKey: { type: 'string', default: '', description: 'Shared API key; "" = none (users may bring their own). Use "${NAME}" to read it from the environment.' },
        },
      },
    },
    catalogTtlMs: {
      type: 'integer', minimum: 1_000, default: 300_000,
      description: 'How long a discovered model list is fresh, in ms; a stale list is still served when a refresh fails.',
    },
  },
};
