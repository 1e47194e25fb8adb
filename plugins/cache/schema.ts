import type { ConfigProblem, JsonSchema } from '../../core/sdk/index.ts';

/** The chat operations a cache may answer: those whose answer `onAnswer` sees and `replyAnswer` renders. */
export const CHAT_OPERATIONS = ['chat.completions', 'messages.create', 'responses.create'] as const;

/** The most one entry may take: the plugin store's own limit on a value (8 MiB). */
const MAX_ENTRY_BYTES_LIMIT = 8 * 1024 * 1024;

export interface CacheConfig {
  ttlSeconds: number;
  maxEntryBytes: number;
  maxBytes: number;
  scope: 'user' | 'key' | 'shared';
  cacheNonZeroTemperature: boolean;
  operations: readonly string[];
  lookupTimeoutMs: number;
}

export const cacheSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ttlSeconds: {
      type: 'integer', minimum: 1, default: 3600,
      description: 'How long a kept answer is given again, seconds from when it was kept.',
    },
    maxEntryBytes: {
      type: 'integer', minimum: 1, maximum: MAX_ENTRY_BYTES_LIMIT, default: 1024 * 1024,
      description: 'An answer whose kept form (JSON, UTF-8) is larger is not kept, bytes (at most 8 MiB).',
    },
    maxBytes: {
      type: 'integer', minimum: 1, default: 256 * 1024 * 1024,
      description: 'Bytes all kept answers may take together (keys and values); beyond it the oldest kept are dropped first.',
    },
    scope: {
      enum: ['user', 'key', 'shared'], default: 'user',
      description: 'Who shares answers: "user" (a gateway user gets only answers to their own questions), "key" (per API key), "shared" (every caller gets any caller\'s answer to the same request).',
    },
    cacheNonZeroTemperature: {
      type: 'boolean', default: false,
      description: 'Also keep answers to requests that sample (temperature above 0, or no temperature: the providers\' default is 1). False: only temperature 0 is cached.',
    },
    operations: {
      type: 'array', items: { enum: [...CHAT_OPERATIONS] }, uniqueItems: true, default: [...CHAT_OPERATIONS],
      description: 'The endpoints cached: chat.completions (OpenAI chat), messages.create (Anthropic Messages), responses.create (OpenAI Responses).',
    },
    lookupTimeoutMs: {
      type: 'integer', minimum: 1, default: 1000,
      description: 'How long a lookup may take before the request goes on as a miss (a slow database or Redis never fails a request), ms.',
    },
  },
};

/** What the schema cannot say: an entry must fit the store. */
export function checkCacheConfig(config: CacheConfig): ConfigProblem[] {
  return config.maxEntryBytes > config.maxBytes
    ? [{ pointer: '/maxEntryBytes', message: `must not exceed maxBytes (${config.maxBytes}): such an answer could never be kept` }]
    : [];
}
