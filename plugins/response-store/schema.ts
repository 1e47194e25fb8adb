/** Config of the response-store plugin, validated at boot (every field described and defaulted). */
import type { JsonSchema } from '../../core/json-schema.ts';

export interface ResponseStoreConfig {
  retentionDays: number;
  sweepIntervalMs: number;
}

export const responseStoreSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    retentionDays: {
      type: 'integer',
      minimum: 1,
      default: 30,
      description: 'Days a stored response can be retrieved and continued (previous_response_id), counted from when it was answered (OpenAI keeps them 30 days).',
    },
    sweepIntervalMs: {
      type: 'integer',
      anyOf: [{ const: 0 }, { minimum: 1000 }],
      default: 600_000,
      description: 'How often expired responses are deleted, in batches, in the background (they are unreadable from expiry on either way); 0 = never (another process or job sweeps).',
    },
  },
};
