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
 * Where the counts live is not this plugin's business: it asks `ctx.rateCounters`
 * (`core/rate-counters.ts`), in memory for one process (limits restart full when it restarts) or in
 * Redis shared by every replica (the manifest's `coordination`), which may also refuse with 503
 * `coordination_unavailable` while Redis is unreachable. A user whose limit is changed starts with a
 * full bucket at the new limit.
 */
import type { Plugin, PluginContext } from '../../core/plugin.ts';
import { isModelOperation } from '../../core/dialects/index.ts';
import { definePlugin } from '../../core/plugin.ts';
import type { Exchange, Principal } from '../../core/exchange.ts';
import { gatewayError, rateLimitExceeded } from '../../core/errors.ts';
import { worstCaseTokens } from '../../core/worst-case.ts';
import type { GcraDecision } from '../../core/gcra.ts';
import type { RateBucket, SlotLease, SlotLimit } from '../../core/rate-counters.ts';
import { setRateLimitHeaders, tighterOf } from './headers.ts';
import type { LimitState, RateLimitService } from '../../core/services.ts';
import { rateLimitSchema, type RateLimitConfig } from './schema.ts';

const PERIOD_MS = 60_000;

type Dimension = 'requests' | 'tokens';
type Scope = 'user' | 'key';

/** One limit that applies to a caller: its bucket (limit and caller's name). */
interface AppliedLimit {
  dimension: Dimension;
  scope: Scope;
  limit: number;
  bucket: RateBucket;
}

interface ExchangeState {
  /** Token units taken in onRequest, to settle when the response ends. */
  reserved: Array<{ bucket: RateBucket; units: number }>;
  /** In-flight slots taken in onRequest, given back when the response ends. */
  lease: SlotLease | null;
}

/** One concurrency limit that applies to a caller. */
interface ConcurrencySlot extends SlotLimit {
  scope: Scope;
}

function createRateLimit(config: RateLimitConfig, ctx: PluginContext): Plugin<ExchangeState> {
  const counters = ctx.rateCounters;

  function slotsOf(principal: Principal): ConcurrencySlot[] {
    const slots: ConcurrencySlot[] = [];
    const userLimit = principal.maxConcurrent ?? config.defaultMaxConcurrent;
    if (userLimit !== null) slots.push({ scope: 'user', limit: userLimit, name: `user:${principal.gatewayUserId}` });
    if (config.maxConcurrentPerKey !== null) slots.push({ scope: 'key', limit: config.maxConcurrentPerKey, name: `key:${principal.apiKeyId}` });
    return slots;
  }

  /** Takes a slot of every concurrency limit, or throws 429 `concurrency_limit_exceeded` taking none. */
  async function takeSlots(slots: readonly ConcurrencySlot[], state: ExchangeState): Promise<void> {
    if (slots.length === 0) return;
    const grant = await counters.acquire(slots);
    if (grant.lease) {
      state.lease = grant.lease;
      return;
    }
    const full = slots[grant.full]!;
    const whose = full.scope === 'user' ? 'your gateway user' : 'this API key';
    throw gatewayError('concurrency_limit_exceeded', {
      message: `Too many requests in flight: ${whose} may have ${full.limit} at once (streams count until they end). Retry when one finishes.`,
      headers: { 'x-ratelimit-limit-concurrency': String(full.limit), 'x-ratelimit-remaining-concurrency': '0' },
    });
  }

  function limitsOf(principal: Principal): AppliedLimit[] {
    const applied: AppliedLimit[] = [];
    const add = (dimension: Dimension, scope: Scope, limit: number | null, id: number) => {
      if (limit !== null) applied.push({ dimension, scope, limit, bucket: { name: `${dimension}:${scope}:${id}`, limit, periodMs: PERIOD_MS } });
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

  /**
   * Takes from every rpm/tpm limit, all or nothing (the counters check all before taking any); throws
   * 429 when one refuses. A refused request leaves every limit untouched.
   */
  async function takeRates(ex: Exchange, applied: readonly AppliedLimit[], state: ExchangeState): Promise<void> {
    if (applied.length === 0) return;
    const reservation = applied.some((a) => a.dimension === 'tokens') ? reservationOf(ex) : 0;
    const costs = applied.map((a) => (a.dimension === 'requests' ? 1 : reservation));
    const taken = await counters.take(applied.map((a) => a.bucket), costs);
    // Unknown state (shared counters down, failing open): let it through, uncounted, without headers.
    if (!taken.decisions || !taken.after) return;
    const states = applied.map((a, i) => stateOf(a, taken.after![i]!));

    if (!taken.allowed) {
      let refusal: { limit: AppliedLimit; decision: GcraDecision } | null = null;
      applied.forEach((limit, i) => {
        const decision = taken.decisions![i]!;
        if (!decision.allowed && (!refusal || decision.retryAfterMs > refusal.decision.retryAfterMs)) refusal = { limit, decision };
      });
      const { limit, decision } = refusal!;
      throw rateLimitExceeded(refusalMessage(limit, decision, reservation), decision.retryAfterMs, headersOf(applied, states));
    }
    applied.forEach((limit, i) => {
      if (limit.dimension === 'tokens') state.reserved.push({ bucket: limit.bucket, units: taken.decisions![i]!.cost });
    });
    Object.assign(ex.responseHeaders, headersOf(applied, states));
  }

  const service: RateLimitService = {
    async statusOf(principal) {
      const applied = limitsOf(principal);
      const peeked = applied.length === 0 ? [] : await counters.peek(applied.map((a) => a.bucket));
      const states = (dimension: Dimension) =>
        (peeked ?? []).map((decision, i) => ({ limit: applied[i]!, decision }))
          .filter(({ limit }) => limit.dimension === dimension)
          .map(({ limit, decision }) => stateOf(limit, decision));
      return { requests: tighterOf(states('requests')), tokens: tighterOf(states('tokens')) };
    },
  };
  ctx.services.provide('rateLimit', service);

  return {
    name: 'rate-limit',
    createState: () => ({ reserved: [], lease: null }),
    async onRequest(ex, state) {
      if (!isModelOperation(ex.operation) || !ex.principal) return;
      // A token limit counts the prompt: the tokenizer loads on the first such request (once per process).
      const applied = limitsOf(ex.principal);
      if (applied.some((a) => a.dimension === 'tokens')) {
        const loading = ctx.tokens.ready();
        if (loading) await loading;
      }
      await takeSlots(slotsOf(ex.principal), state);
      try {
        await takeRates(ex, applied, state);
      } catch (err) {
        // Refused (or the counters are down): the slots were never used.
        await releaseSlotsOf(counters, state);
        throw err;
      }
    },
    async onResponseEnd(ex, state) {
      await releaseSlotsOf(counters, state);
      if (state.reserved.length === 0) return;
      const actual = ex.usage ? ex.usage.promptTokens + ex.usage.completionTokens : 0;
      await Promise.all(state.reserved.splice(0).map(({ bucket, units }) => counters.settle(bucket, actual - units)));
    },
  };
}

async function releaseSlotsOf(counters: PluginContext['rateCounters'], state: ExchangeState): Promise<void> {
  const lease = state.lease;
  state.lease = null;
  if (lease) await counters.release(lease);
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
