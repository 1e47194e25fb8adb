/**
 * rate-limit: requests and tokens per minute, per gateway user (`rpm` / `tpm`, else the manifest's
 * defaults), per API key (its own `rpm` / `tpm`, on top: every applicable limit must allow) and per
 * team (the user's team's `rpm` / `tpm` / `max_concurrent`, schema v23; null = no team limit), all
 * taken together, all or nothing; a team's refusal names the team.
 * Model calls (every dialect's) are limited; so are the metered operations that call no model
 * (`isMeteredOperation`: token counts, `models.retrieve`), by their request limits and concurrency
 * only: they generate no tokens, and each may still cost an upstream call or a local count.
 *
 * Each limit is an exact GCRA bucket (`gcra.ts`) of one minute with a burst of the whole minute.
 * A request takes 1 request unit and reserves `prompt tokens + max output tokens` (× `n`) token
 * units (a short prompt's tokens bounded by its bytes, counted exactly when that bound is refused:
 * `core/tokens/worst-case.ts`); all limits are checked before any is taken, so a refused request costs
 * nothing. When the response ends the token reservation is settled to the usage the upstream
 * reported (0 when nothing was forwarded); requests are never given back. Every limited chat response
 * carries the contract's `x-ratelimit-*` headers, showing the limit with less remaining when the
 * user's and the key's both apply.
 *
 * Concurrency: model calls in flight at once per user (its `max_concurrent`, else the manifest's
 * `defaultMaxConcurrent`) and per key (`maxConcurrentPerKey`), taken before the request body is read
 * (`beforeBody`; with the rates when there is no body) and given back when the response ends
 * (`concurrency.ts`); beyond it 429 `concurrency_limit_exceeded` with `retry-after: 1` and
 * `x-ratelimit-{limit,remaining}-concurrency`.
 *
 * Where the counts live is not this plugin's business: it asks `ctx.rateCounters`
 * (`core/coordination/rate-counters.ts`), in memory for one process (limits restart full when it restarts) or in
 * Redis shared by every replica (the manifest's `coordination`), which may also refuse rpm/tpm with
 * 503 `coordination_unavailable` while Redis is unreachable (concurrency is then counted per replica). A user whose limit is changed starts with a
 * full bucket at the new limit.
 */
import type { Plugin, PluginContext } from '../../core/plugin.ts';
import { isMeteredOperation, isModelOperation } from '../../core/dialects/index.ts';
import { definePlugin } from '../../core/plugin.ts';
import type { Exchange, Principal } from '../../core/exchange.ts';
import { gatewayError, rateLimitExceeded } from '../../core/errors.ts';
import { worstCaseTokens } from '../../core/tokens/worst-case.ts';
import type { GcraDecision } from '../../core/coordination/gcra.ts';
import type { RateBucket, SlotLease, SlotLimit } from '../../core/coordination/rate-counters.ts';
import { isTighter, setRateLimitHeaders, tighterOf } from './headers.ts';
import { onFailure, then, type MaybePromise } from '../../core/runtime/maybe-promise.ts';
import type { LimitState, RateLimitService } from '../../core/services.ts';
import { rateLimitSchema, type RateLimitConfig } from './schema.ts';

const PERIOD_MS = 60_000;

type Dimension = 'requests' | 'tokens';
type Scope = 'user' | 'key' | 'team';

/** One limit that applies to a caller: its bucket (limit and caller's name). */
interface AppliedLimit {
  dimension: Dimension;
  scope: Scope;
  limit: number;
  bucket: RateBucket;
}

/**
 * What limits a principal, worked out once per principal (auth-guard keeps one object per key until
 * the key or its user changes), not per request: its rpm/tpm limits and concurrency slots.
 */
interface LimitPlan {
  applied: readonly AppliedLimit[];
  buckets: readonly RateBucket[];
  /** True when a token limit applies: the request's prompt must be counted. */
  countsTokens: boolean;
  slots: readonly ConcurrencySlot[];
}

/** A principal's plans: for a model call, and for a metered operation (its request limits and slots, no token limit). */
interface PrincipalPlans {
  model: LimitPlan;
  metered: LimitPlan;
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
  /** The team's name, for a team's slot (its 429 names the team). */
  teamName?: string;
}

function createRateLimit(config: RateLimitConfig, ctx: PluginContext): Plugin<ExchangeState> {
  const counters = ctx.rateCounters;
  const plans = new WeakMap<Principal, PrincipalPlans>();

  function plansOf(principal: Principal): PrincipalPlans {
    let planned = plans.get(principal);
    if (!planned) {
      const applied = limitsOf(principal);
      const slots = slotsOf(principal);
      const requests = applied.filter((a) => a.dimension === 'requests');
      planned = {
        model: { applied, buckets: applied.map((a) => a.bucket), countsTokens: applied.some((a) => a.dimension === 'tokens'), slots },
        metered: { applied: requests, buckets: requests.map((a) => a.bucket), countsTokens: false, slots },
      };
      plans.set(principal, planned);
    }
    return planned;
  }

  function slotsOf(principal: Principal): ConcurrencySlot[] {
    const slots: ConcurrencySlot[] = [];
    const userLimit = principal.maxConcurrent ?? config.defaultMaxConcurrent;
    if (userLimit !== null) slots.push({ scope: 'user', limit: userLimit, name: `user:${principal.gatewayUserId}` });
    if (config.maxConcurrentPerKey !== null) slots.push({ scope: 'key', limit: config.maxConcurrentPerKey, name: `key:${principal.apiKeyId}` });
    const team = principal.team;
    if (team && team.maxConcurrent !== null) slots.push({ scope: 'team', limit: team.maxConcurrent, name: `team:${team.id}`, teamName: team.name });
    return slots;
  }

  /** Takes a slot of every concurrency limit, or throws 429 `concurrency_limit_exceeded` taking none. */
  function takeSlots(slots: readonly ConcurrencySlot[], state: ExchangeState): MaybePromise<void> {
    return then(counters.acquire(slots), (grant) => {
      if (grant.lease) {
        state.lease = grant.lease;
        return;
      }
      const full = slots[grant.full]!;
      const whose = whoseLimit(full.scope, full.teamName);
      throw gatewayError('concurrency_limit_exceeded', {
        message: `Too many requests in flight: ${whose} may have ${full.limit} at once (streams count until they end). Retry when one finishes.`,
        headers: { 'x-ratelimit-limit-concurrency': String(full.limit), 'x-ratelimit-remaining-concurrency': '0' },
      });
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
    const team = principal.team;
    if (team) {
      add('requests', 'team', team.rpm, team.id);
      add('tokens', 'team', team.tpm, team.id);
    }
    return applied;
  }

  function refusalMessage(limit: AppliedLimit, decision: GcraDecision, reservation: number, teamName: string | undefined): string {
    const whose = whoseLimit(limit.scope, teamName);
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
   * 429 when one refuses. A refused request leaves every limit untouched. A token limit reserves the
   * worst case: the prompt (a short one's byte bound unless `exact`) plus every output token the
   * request may generate; when a token limit refuses the bound, the prompt is counted and taken again.
   */
  function takeRates(ex: Exchange, plan: LimitPlan, state: ExchangeState, exact = false): MaybePromise<void> {
    const { applied } = plan;
    if (applied.length === 0) return;
    const worst = plan.countsTokens ? worstCaseTokens(ex, ctx.tokens, config.maxOutputTokensEstimate, exact) : null;
    const reservation = worst ? worst.promptTokens + worst.outputTokens : 0;
    const costs = applied.map((a) => (a.dimension === 'requests' ? 1 : reservation));
    return then(counters.take(plan.buckets, costs), (taken) => {
      // Unknown state (shared counters down, failing open): let it through, uncounted, without headers.
      if (!taken.decisions || !taken.after) return;
      const { decisions, after } = taken;
      if (!taken.allowed && worst?.promptBound && decisions.some((d, i) => !d.allowed && applied[i]!.dimension === 'tokens')) {
        // The exact count is lower than the bound and may fit: nothing was taken, so take again with it.
        const loading = ctx.tokens.ready();
        return loading ? loading.then(() => takeRates(ex, plan, state, true)) : takeRates(ex, plan, state, true);
      }
      if (!taken.allowed) {
        let refused = -1;
        decisions.forEach((decision, i) => {
          if (!decision.allowed && (refused < 0 || decision.retryAfterMs > decisions[refused]!.retryAfterMs)) refused = i;
        });
        const decision = decisions[refused]!;
        const headers: Record<string, string> = {};
        setHeaders(headers, applied, after);
        throw rateLimitExceeded(refusalMessage(applied[refused]!, decision, reservation, ex.principal?.team?.name), decision.retryAfterMs, headers);
      }
      applied.forEach((limit, i) => {
        if (limit.dimension === 'tokens') state.reserved.push({ bucket: limit.bucket, units: decisions[i]!.cost });
      });
      setHeaders(ex.responseHeaders, applied, after);
    });
  }

  /**
   * Takes the concurrency slots (unless `beforeBody` took them), then the rates; refused rates (or
   * counters down) give the slots back.
   */
  function admit(ex: Exchange, plan: LimitPlan, state: ExchangeState): MaybePromise<void> {
    if (plan.slots.length === 0) return takeRates(ex, plan, state);
    return then(state.lease ? undefined : takeSlots(plan.slots, state), () => onFailure(() => takeRates(ex, plan, state), () => releaseSlotsOf(counters, state)));
  }

  /** The plan of an exchange this plugin limits, or null. */
  function planOf(ex: Exchange): LimitPlan | null {
    if (!ex.principal) return null;
    if (isModelOperation(ex.operation)) return plansOf(ex.principal).model;
    return isMeteredOperation(ex.operation) ? plansOf(ex.principal).metered : null;
  }

  const service: RateLimitService = {
    async statusOf(principal) {
      const { applied, buckets } = plansOf(principal).model;
      const peeked = applied.length === 0 ? [] : await counters.peek(buckets);
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
    // The slot is held while the body is read: a caller at its limit is refused before its body is
    // read, and one caller's many big bodies wait on its own limit, not on everyone's memory.
    beforeBody(ex, state) {
      const plan = planOf(ex);
      if (plan && plan.slots.length > 0) return takeSlots(plan.slots, state);
    },
    // Synchronous with the in-process counters once the tokenizer is loaded: no promise per request.
    onRequest(ex, state) {
      if (!ex.principal) return;
      if (!isModelOperation(ex.operation)) return isMeteredOperation(ex.operation) ? admit(ex, plansOf(ex.principal).metered, state) : undefined;
      const plan = plansOf(ex.principal).model;
      // A token limit counts a prompt too long for its byte bound: the tokenizer loads on the first such
      // request (once per process).
      const loading = plan.countsTokens ? ctx.tokens.readyFor(ex) : null;
      return loading ? loading.then(() => admit(ex, plan, state)) : admit(ex, plan, state);
    },
    onResponseEnd(ex, state) {
      return then(releaseSlotsOf(counters, state), () => {
        if (state.reserved.length === 0) return;
        const actual = ex.usage ? ex.usage.promptTokens + ex.usage.completionTokens : 0;
        const settling = state.reserved.splice(0).map(({ bucket, units }) => counters.settle(bucket, actual - units));
        if (settling.some((settled) => settled instanceof Promise)) return Promise.all(settling.filter((settled) => settled instanceof Promise)).then(() => undefined);
      });
    },
  };
}

/** Who a refused limit belongs to, as the 429's message names it. */
function whoseLimit(scope: Scope, teamName: string | undefined): string {
  if (scope === 'team') return `your team "${teamName ?? ''}"`;
  return scope === 'user' ? 'your gateway user' : 'this API key';
}

function releaseSlotsOf(counters: PluginContext['rateCounters'], state: ExchangeState): MaybePromise<void> {
  const lease = state.lease;
  state.lease = null;
  if (lease) return counters.release(lease);
}

/**
 * Sets the headers of `applied`'s limits in their state `after` the take: per dimension, the tighter
 * (`isTighter`, without building a state per limit), requests first.
 */
function setHeaders(headers: Record<string, string>, applied: readonly AppliedLimit[], after: readonly GcraDecision[]): void {
  for (const dimension of DIMENSIONS) {
    let shown = -1;
    for (let i = 0; i < applied.length; i++) {
      if (applied[i]!.dimension !== dimension) continue;
      if (shown < 0 || isTighter(after[i]!, after[shown]!)) shown = i;
    }
    if (shown >= 0) setRateLimitHeaders(headers, dimension, stateOf(applied[shown]!, after[shown]!));
  }
}

const DIMENSIONS: readonly Dimension[] = ['requests', 'tokens'];

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
