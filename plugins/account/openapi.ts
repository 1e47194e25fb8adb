/** The component schema of `GET /api/account` (the view `index.ts` builds). */
import type { JsonSchema } from '../../core/json-schema.ts';
import { int, isoOrNull, nullable, nullableUsd, object, str, usd } from '../../core/openapi/openapi-schema.ts';

const rateLimitState: JsonSchema = {
  type: ['object', 'null'],
  description: 'One per-minute limit and what is left of it; null when no such limit applies.',
  required: ['limit', 'remaining', 'reset_ms'],
  properties: {
    limit: int('Allowed per minute.'),
    remaining: int('Still available now.'),
    reset_ms: int('Milliseconds until the limit is fully replenished (0 = full now).'),
  },
};

function budgetSchema(description: string): JsonSchema {
  return object(description, {
    limit_usd: nullableUsd('Budget per period; null = unlimited'),
    spent_usd: usd('Spent in the current period'),
    reserved_usd: usd('Held for requests still in flight (their worst-case cost)'),
    remaining_usd: nullableUsd('limit_usd − spent_usd − reserved_usd; null = unlimited'),
    period: { enum: ['daily', 'weekly', 'monthly', 'never'], description: 'Reset period, calendar-aligned in time_zone: daily at 00:00, weekly on Monday, monthly on the 1st; `never` never resets.' },
    period_start: isoOrNull('Start of the current period (ISO 8601); null when the budget never resets.'),
    resets_at: isoOrNull('When spending returns to zero (ISO 8601); null when the budget never resets.'),
    time_zone: str('IANA time zone the periods are aligned in (e.g. `UTC`, `Europe/Paris`).'),
  });
}

export const accountSchema: JsonSchema = object('The calling gateway user, its key, budget, rate limits and usage this budget period.', {
  object: { const: 'account', description: 'Always `account`.' },
  user: object('The gateway user that owns the key.', {
    id: int('User id.'),
    name: str('User name.'),
    email: { type: ['string', 'null'], description: 'Email address, if one was set.' },
  }),
  key: object('The API key the request used.', {
    id: int('Key id.'),
    name: { type: ['string', 'null'], description: 'The key\'s label, if one was set.' },
    prefix: { type: ['string', 'null'], description: 'The key\'s first characters, as key listings show them (never the whole key).' },
  }),
  budget: nullable(budgetSchema('Spending limit and where the current period stands; null when the gateway runs without the budget plugin.')),
  team: nullable(object('The user\'s team (its budget applies on top of the user\'s); null when the user has none.', {
    id: int('Team id.'),
    name: str('Team name.'),
    budget: nullable(budgetSchema('The team\'s budget, shared by its members; null when the gateway runs without the budget plugin.')),
  })),
  rate_limits: object('Per-minute limits (the tighter of the user\'s and the key\'s).', {
    requests: { ...rateLimitState, description: 'Requests per minute; null when unlimited.' },
    tokens: { ...rateLimitState, description: 'Tokens per minute; null when unlimited.' },
  }),
  usage: object('Usage in the current budget period.', {
    since: { type: 'string', format: 'date-time', description: 'Start of the period counted (ISO 8601): the current budget period\'s start (1970-01-01 for a budget that never resets, i.e. all time).' },
    requests: int('Requests made.'),
    prompt_tokens: int('Input tokens billed.'),
    completion_tokens: int('Output tokens billed.'),
    cost_usd: usd('Cost billed'),
  }),
});

