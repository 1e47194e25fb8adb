import type { JsonSchema } from '../../core/json-schema.ts';

export interface MetricsConfig {
  durationBuckets: number[];
  ttftBuckets: number[];
  maxModels: number;
}

const buckets = (description: string, defaults: number[]): JsonSchema => ({
  type: 'array',
  items: { type: 'number', exclusiveMinimum: 0 },
  minItems: 1,
  maxItems: 50,
  uniqueItems: true,
  default: defaults,
  description,
});

export const metricsSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    durationBuckets: buckets(
      'Upper bounds of the tollgate_request_duration_seconds histogram, in seconds (any order).',
      [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120],
    ),
    ttftBuckets: buckets(
      'Upper bounds of the tollgate_time_to_first_token_seconds histogram, in seconds (any order).',
      [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
    ),
    maxModels: {
      type: 'integer', minimum: 1, maximum: 100_000, default: 1_000,
      description: 'Most provider/model pairs that get their own label values. A model gets one the first time its provider serves it; past this limit further models are counted under model "" (and a warning is logged once).',
    },
  },
};
