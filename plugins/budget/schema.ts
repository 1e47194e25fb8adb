/** Config of the budget plugin, validated at boot (every field described and defaulted). */
import type { JsonSchema } from '../../core/json-schema.ts';

export interface BudgetConfig {
  timeZone: string;
  maxOutputTokensEstimate: number;
  unpricedModels: 'allow' | 'deny';
  overflow: 'cap' | 'refuse';
  minOutputTokens: number;
  alerts: BudgetAlertsConfig;
}

/** Budget alerts: thresholds crossed by a user's spend, sent to a webhook (docs/budgets-and-pricing.md "Budget alerts"). */
export interface BudgetAlertsConfig {
  /** Percents of the budget limit; a user's own `budget_alert_thresholds` replaces them. [] = none. */
  thresholds: number[];
  /** Where alerts are POSTed; absent = recorded (and shown in the admin UI) but not sent. */
  webhookUrl?: string;
  /** HMAC-SHA256 key of the `x-tollgate-signature` header; required with `webhookUrl`. */
  secret?: string;
  timeoutMs: number;
  maxAttempts: number;
  /** First retry delay; each next one doubles, with jitter, up to `maxBackoffMs`. */
  backoffMs: number;
  maxBackoffMs: number;
  /** How often due deliveries are looked for (new alerts are sent at once). */
  pollIntervalMs: number;
}

const alertsSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  default: {},
  description: 'Budget alerts: once per budget period, when a user\'s recorded spend crosses a threshold, a signed JSON webhook is sent (and the alert shows in the admin UI).',
  dependencies: { webhookUrl: ['secret'] },
  properties: {
    thresholds: {
      type: 'array',
      items: { type: 'integer', minimum: 1, maximum: 1000 },
      maxItems: 10,
      uniqueItems: true,
      default: [80, 100],
      description: 'Percents of the budget limit that fire an alert, once each per period. A user\'s own thresholds (`tollgate users update NAME --alert-thresholds 50,90`) replace these; [] = no alerts.',
    },
    webhookUrl: {
      type: 'string',
      pattern: '^https?://',
      description: 'URL each alert is POSTed to as JSON. Without it alerts are recorded and shown in the admin UI, not sent.',
    },
    secret: {
      type: 'string',
      minLength: 16,
      description: 'Key of the HMAC-SHA256 in the x-tollgate-signature header (required with webhookUrl; e.g. "${TOLLGATE_ALERT_SECRET}"). At least 16 characters.',
    },
    timeoutMs: {
      type: 'integer',
      minimum: 100,
      default: 10_000,
      description: 'Longest one delivery attempt may take (connect, headers and body), ms.',
    },
    maxAttempts: {
      type: 'integer',
      minimum: 1,
      maximum: 100,
      default: 10,
      description: 'Attempts per alert before it is marked failed (a timeout, a network error or a non-2xx answer is a failed attempt).',
    },
    backoffMs: {
      type: 'integer',
      minimum: 1,
      default: 10_000,
      description: 'Delay before the first retry, ms; each next retry waits twice as long (with ±50 % jitter), up to maxBackoffMs.',
    },
    maxBackoffMs: {
      type: 'integer',
      minimum: 1,
      default: 3_600_000,
      description: 'Longest delay between two attempts, ms.',
    },
    pollIntervalMs: {
      type: 'integer',
      minimum: 10,
      default: 1_000,
      description: 'How often deliveries that are due (retries, and those left by a restart) are looked for, ms.',
    },
  },
};

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
    alerts: alertsSchema,
  },
};
