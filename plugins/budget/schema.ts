/** Config of the budget plugin, validated at boot (every field described and defaulted). */
import type { JsonSchema } from '../../core/json-schema.ts';

export interface BudgetConfig {
  timeZone: string;
  maxOutputTokensEstimate: number;
  unpricedModels: 'allow' | 'deny';
  overflow: 'cap' | 'refuse';
  minOutputTokens: number;
}

export const budgetSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    timeZone: {
      type: 'string',
      format: 'time-zone',
      default: 'UTC',
      description: 'IANA timezone in which budget periods are calendar-aligned: daily at local 00:00, weekly on Monday, monthly on the 1st.',
    },
    maxOutputTokensEstimate: {
      type: 'integer',
      minimum: 1,
      default: 4096,
      description: 'Output tokens reserved for a request that sets neither max_completion_tokens nor max_tokens.',
    },
    overflow: {
      enum: ['cap', 'refuse'],
      default: 'cap',
      description: 'When a request\'s worst case does not fit the remaining budget: "cap" serves it with its output limit lowered to what the budget can pay (at least minOutputTokens; the response says so in x-tollgate-max-tokens-capped), "refuse" answers 402.',
    },
    minOutputTokens: {
      type: 'integer',
      minimum: 1,
      default: 256,
      description: 'With overflow "cap": the fewest output tokens per choice worth serving; below it the request is refused (402).',
    },
    unpricedModels: {
      enum: ['allow', 'deny'],
      default: 'allow',
      description: 'Whether a user with a budget may call a model that has no price ("allow": served and logged as unpriced; "deny": 402).',
    },
  },
};
