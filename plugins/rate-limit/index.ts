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
 * Concurrency: model calls in flight at once per user (its `max_concurrent`, else the manifest's
 * `defaultMaxConcurrent`) and per key (`maxConcurrentPerKey`), checked with the rates and given back
 * when the response ends (`concurrency.ts`); beyond it 429 `concurrency_limit_exceeded` with
 * `retry-after: 1` and `x-ratelimit-{limit,remaining}-concurrency`.
 *
 * State is in memory: limits restart full when the gateway restarts. A user whose limit is changed
 * starts with a full bucket at the new limit.
 */
import type { Plugin, PluginContext } from '../../core/plugin.ts';
import { isModelOperation } from '../../core/dialects/index.ts';
import { definePlugin } from '../../core/plugin.ts';
import type { Exchange, Principal } from '../../core/exchange.ts';
import { gatewayError, rateLimitExceeded } from '../../core/errors.ts';
import { worstCaseTokens } from '../../core/worst-case.ts';
import { createGcraLimiter, type GcraDecision, type GcraLimiter } from './gcra.ts';
import { setRateLimitHeaders, tighterOf } from './headers.ts';
import type { LimitState, RateLimitService } from '../../core/services.ts';
import { rateLimitSchema, type RateLimitConfig } from './schema.ts';
import { createInFlightCounter } from './concurrency.ts';

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
  /** In-flight slots taken in onRequest, given back when the response ends. */
  slots: string[];
}

/** One concurrency limit that applies to a caller. */
interface ConcurrencySlot {
  scope: Scope;
  limit: number;
  key: string;
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

  const inFlight = createInFlightCounter();

  function slotsOf(principal: Principal): ConcurrencySlot[] {
    const slots: ConcurrencySlot[] = [];
    const userLimit = principal.maxConcurrent ?? config.defaultMaxConcurrent;
    if (userLimit !== null) slots.push({ scope: 'user', limit: userLimit, key: `user:${principal.gatewayUserId}` });
    if (config.maxConcurrentPerKey !== null) slots.push({ scope: 'key', limit: config.maxConcurrentPerKey, key: `key:${principal.apiKeyId}` });
    return slots;
  }

  /** Throws 429 `concurrency_limit_exceeded` when a slot is full; takes nothing. */
  function checkConcurrency(slots: readonly ConcurrencySlot[]): void {
    const full = slots.find((slot) => inFlight.count(slot.key) >= slot.limit);
    if (!full) return;
    const whose = full.scope === 'user' ? 'your gateway user' : 'this API key';
    throw gatewayError('concurrency_limit_exceeded', {
      message: `Too many requests in flight: ${whose} may have ${full.limit} at once (streams count until they end). Retry when one finishes.`,
      headers: { 'x-ratelimit-limit-concurrency': String(full.limit), 'x-ratelimit-remaining-concurrency': '0' },
    });
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

  /** Checks every rpm/tpm limit, then takes from all of them (throws 429 before taking any). */
  function takeRates(ex: Exchange, principal: Principal, state: ExchangeState): void {
    const applied = limitsOf(principal);
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
    createState: () => ({ reserved: [], slots: [] }),
    onRequest(ex, state) {
      if (!isModelOperation(ex.operation) || !ex.principal) return;
      const principal = ex.principal;
      const admit = () => {
        const slots = slotsOf(principal);
        checkConcurrency(slots);
        takeRates(ex, principal, state);
        for (const slot of slots) {
          inFlight.take(slot.key);
          state.slots.push(slot.key);
        }
      };
      // A token limit counts the prompt: the tokenizer loads on the first such request (once per process).
      const loading = limitsOf(principal).some((a) => a.dimension === 'tokens') ? ctx.tokens.ready() : null;
      if (loading) return loading.then(admit);
      admit();
    },
    onResponseEnd(ex, state) {
      for (const key of state.slots.splice(0)) inFlight.release(key);
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
