import type { JsonSchema } from '../../core/json-schema.ts';

export interface AuthGuardConfig {
  cacheSize: number;
  lastUsedFlushMs: number;
}

export const authGuardSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    cacheSize: {
      type: 'integer', minimum: 1, default: 10_000,
      description: 'How many known keys to keep in memory, and as many unknown ones apart (a flood of random keys never evicts a known one). Entries are dropped within ~250 ms of any change made by another process (CLI).',
    },
    lastUsedFlushMs: {
      type: 'integer', minimum: 100, default: 1_000,
      description: 'How often the keys\' last_used_at timestamps are written back, in ms.',
    },
  },
};
