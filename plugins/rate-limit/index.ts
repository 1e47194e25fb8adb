/**
 * rate-limit: requests and tokens per minute, per gateway user (`rpm` / `tpm`, else the manifest's
 * defaults) and per API key (its own `rpm` / `tpm`, on top: every applicable limit must allow).
 * Only chat completions are limited.
 *
 * Each limit is an exact GCRA bucket (`gcra.ts`) of one minute with a burst of the whole minute.
 * A request takes 1 request unit and reserves `prompt tokens + max output tokens` (× `n`) token
 * units; all limits are checked before any is taken, so a refused request costs nothing. When the
 * response ends the token reservation is settled to the usage the upstream reported (0 when nothing
 * was forwarded); requests are never given back. Every limited chat response carries the contract's
 * `x-ratelimit-*` headers, showing the limit with less remaining when the user's and the key's both apply.
 *
 * State is in memory: limits restart full when the gateway restarts. A user whose limit is changed
 * starts with a full bucket at the new limit.
 */
import type { Plugin, PluginContext } from '../../core/plugin.ts';
import { isModelOperation } from '../../core/dialects/index.ts';
import { definePlugin } from '../../core/plugin.ts';
import type { Exchange, Principal } from '../../core/exchange.ts';
import { rateLimitExceeded } from '../../core/errors.ts';
import { worstCaseTokens } from '../../core/worst-case.ts';
import { createGcraLimiter, type GcraDecision, type GcraLimiter } from './gcra.ts';
import { setRateLimitHeaders, tighterOf } from './headers.ts';
import type { LimitState, RateLimitService } from '../../core/services.ts';
import { rateLimitSchema, type RateLimitConfig } from './schema.ts';

const PERIOD_MS = 60_000;

type Dimension = 'requests' | 'tokens';
type Scope = 'user' | 'key';

/** One limit that applies to a caller: which bucket, under which key. */
interface AppliedLimit {
  dimension: Dimension;
  scope: Scope;
  limit: number;
  limiter: GcraLimiter;
  key: string;
}

interface ExchangeState {
  /** Token units taken in onRequest, to settle when the response ends. */
  reserved: Array<{ limiter: GcraLimiter; key: string; units: number }>;
}

function createRateLimit(config: RateLimitConfig, ctx: PluginContext): Plugin<ExchangeState> {
  // One limiter per (dimension, scope, limit value): a limit's buckets only make sense at that limit.
  const limiters = new Map<string, GcraLimiter>();
  function limiterFor(dimension: Dimension, scope: Scope, limit: number): GcraLimiter {
    const id = `${dimension}:${scope}:${limit}`;
    let limiter = limiters.get(id);
    if (!limiter) limiters.set(id, (limiter = createGcraLimiter({ limit, periodMs: PERIOD_MS })));
    return limiter;
  }

  function limitsOf(principal: Principal): AppliedLimit[] {
    const applied: AppliedLimit[] = [];
    const add = (dimension: Dimension, scope: Scope, limit: number | null, key: number) => {
      if (limit !== null) applied.push({ dimension, scope, limit, limiter: limiterFor(dimension, scope, limit), key: String(key) });
    };
    add('requests', 'user', principal.rpm ?? config.defaultRpm, principal.gatewayUserId);
    add('requests', 'key', principal.keyRpm, principal.apiKeyId);
    add('tokens', 'user', principal.tpm ?? config.defaultTpm, principal.gatewayUserId);
    add('tokens', 'key', principal.keyTpm, principal.apiKeyId);
    return applied;
  }

  /** The worst case a request can use: its prompt plus every output token it may generate. */
  function reservationOf(ex: Exchange): number {
    const { promptTokens, outputTokens } = worstCaseTokens(ex, ctx.tokens, config.maxOutputTokensEstimate);
    return promptTokens + outputTokens;
  }

  /** The headers for `states` (one per applied limit), the tighter state per dimension. */
  function headersOf(applied: readonly AppliedLimit[], states: readonly LimitState[]): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const dimension of ['requests', 'tokens'] as const) {
      setRateLimitHeaders(headers, dimension, tighterOf(states.filter((_, i) => applied[i]!.dimension === dimension)));
    }
    return headers;
  }

  function refusalMessage(limit: AppliedLimit, decision: GcraDecision, reservation: number): string {
    const whose = limit.scope === 'user' ? 'your gateway user' : 'this API key';
    const retrySec = Math.ceil(decision.retryAfterMs / 1000);
    if (limit.dimension === 'requests') {
      return `Rate limit reached: ${limit.limit} ${limit.limit === 1 ? 'request' : 'requests'} per minute for ${whose}. Retry in ${retrySec} s.`;
    }
    return `Rate limit reached: ${limit.limit} tokens per minute for ${whose}; this request reserves ${reservation} tokens `
      + `(its prompt plus max_completion_tokens or max_tokens, ${config.maxOutputTokensEstimate} when neither is set). `
      + `Retry in ${retrySec} s, or ask for fewer output tokens.`;
  }

  const service: RateLimitService = {
    statusOf(principal) {
      const nowMs = ctx.clock();
      const states = (dimension: Dimension) =>
        limitsOf(principal).filter((a) => a.dimension === dimension).map((a) => stateOf(a, a.limiter.peek(a.key, nowMs)));
      return { requests: tighterOf(states('requests')), tokens: tighterOf(states('tokens')) };
    },
  };
  ctx.services.provide('rateLimit', service);

  return {
    name: 'rate-limit',
    createState: () => ({ reserved: [] }),
    onRequest(ex, state) {
      if (!isModelOperation(ex.operation) || !ex.principal) return;
      const applied = limitsOf(ex.principal);
      if (applied.length === 0) return;
      const nowMs = ctx.clock();
      const reservation = applied.some((a) => a.dimension === 'tokens') ? reservationOf(ex) : 0;
      const costOf = (a: AppliedLimit) => (a.dimension === 'requests' ? 1 : reservation);

      // Check every limit before taking from any, so a refusal leaves all of them untouched.
      let refusal: { limit: AppliedLimit; decision: GcraDecision } | null = null;
      for (const limit of applied) {
        const decision = limit.limiter.check(limit.key, costOf(limit), nowMs);
        if (!decision.allowed && (!refusal || decision.retryAfterMs > refusal.decision.retryAfterMs)) refusal = { limit, decision };
      }
      if (refusal) {
        const headers = headersOf(applied, applied.map((a) => stateOf(a, a.limiter.peek(a.key, nowMs))));
        throw rateLimitExceeded(refusalMessage(refusal.limit, refusal.decision, reservation), refusal.decision.retryAfterMs, headers);
      }

      const states = applied.map((limit) => {
        const decision = limit.limiter.tryTake(limit.key, costOf(limit), nowMs);
        if (limit.dimension === 'tokens') state.reserved.push({ limiter: limit.limiter, key: limit.key, units: decision.cost });
        return stateOf(limit, decision);
      });
      Object.assign(ex.responseHeaders, headersOf(applied, states));
    },
    onResponseEnd(ex, state) {
      if (state.reserved.length === 0) return;
      const actual = ex.usage ? ex.usage.promptTokens + ex.usage.completionTokens : 0;
      const nowMs = ctx.clock();
      for (const { limiter, key, units } of state.reserved) limiter.adjust(key, actual - units, nowMs);
    },
  };
}

function stateOf(limit: AppliedLimit, decision: GcraDecision): LimitState {
  return { limit: limit.limit, remaining: decision.remaining, resetMs: decision.resetMs };
}

export const rateLimit = definePlugin<RateLimitConfig>({
  name: 'rate-limit',
  description: 'Requests and tokens per minute per gateway user and per API key (GCRA), with OpenAI-style x-ratelimit-* headers and 429s.',
  configSchema: rateLimitSchema,
  order: [{ relation: 'before', plugin: 'budget', why: 'the cheap in-memory check runs before the budget reserves money' }],
  create: createRateLimit,
});
