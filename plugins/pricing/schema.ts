import type { JsonSchema } from '../../core/json-schema.ts';
import { DEFAULT_DATASET_PROVIDERS } from '../../core/money/price-dataset.ts';

export interface PricingConfig {
  seedOnFirstStart: boolean;
  datasetProviders: Record<string, string>;
  freeProviders: string[];
}

const PROVIDER_ID_PATTERN = '^[a-z0-9][a-z0-9_-]*$';

export const pricingSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    seedOnFirstStart: {
      type: 'boolean', default: true,
      description: 'When model_pricing is empty at start, fill it from the bundled price dataset (@pydantic/genai-prices). Prices set by hand are never overwritten by an import.',
    },
    datasetProviders: {
      type: 'object',
      propertyNames: { pattern: PROVIDER_ID_PATTERN },
      additionalProperties: { type: 'string', minLength: 1 },
      default: { ...DEFAULT_DATASET_PROVIDERS },
      description: 'Which dataset provider prices each gateway provider: gateway provider id → dataset provider id (e.g. "gemini": "google"). Used for the import and to match dated model names to their price (gpt-4o-mini-2024-07-18 → gpt-4o-mini). Earlier entries win when two providers list the same model id.',
    },
    freeProviders: {
      type: 'array',
      items: { type: 'string', pattern: PROVIDER_ID_PATTERN },
      default: ['ollama'],
      description: 'Providers whose models cost nothing (local models): a model without a stored price is billed at 0 instead of being unpriced.',
    },
  },
};
