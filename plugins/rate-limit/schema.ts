import type { JsonSchema } from '../../core/json-schema.ts';

export interface RateLimitConfig {
  defaultRpm: number | null;
  defaultTpm: number | null;
  maxOutputTokensEstimate: number;
  defaultMaxConcurrent: number | null;
  maxConcurrentPerKey: number | null;
}

export const rateLimitSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    defaultRpm: {
      type: ['integer', 'null'], minimum: 1, default: null,
      description: 'Chat completion requests per minute for a gateway user whose own rpm is not set; null = unlimited. A key\'s own rpm applies on top.',
    },
    defaultTpm: {
      type: ['integer', 'null'], minimum: 1, default: null,
      description: 'Tokens (prompt + completion) per minute for a gateway user whose own tpm is not set; null = unlimited. A key\'s own tpm applies on top.',
    },
    defaultMaxConcurrent: {
      type: ['integer', 'null'], minimum: 1, default: 64,
      description: 'Model calls in flight at once (streams until their last byte) for a gateway user whose own max_concurrent is not set; null = unlimited. Beyond it 429 concurrency_limit_exceeded, so one user cannot fill the upstream pools everyone shares.',
    },
    maxConcurrentPerKey: {
      type: ['integer', 'null'], minimum: 1, default: null,
      description: 'Model calls in flight at once per API key, on top of the user\'s limit; null = none.',
    },
    maxOutputTokensEstimate: {
      type: 'integer', minimum: 1, default: 4096,
      description: 'Output tokens a token limit reserves for a request that sets neither max_completion_tokens nor max_tokens; settled to the actual usage when the response ends.',
    },
  },
};
