/**
 * budget: keeps each gateway user within their budget (docs/contract.md "Budgets and limits").
 *
 * - `onRequest` (pre-check): a user whose budget for this period is already used up gets 402 before
 *   anything else is done for the request.
 * - `beforeUpstream` (reservation): once the router has picked the model, the request's worst-case
 *   cost (`core/tokens/worst-case.ts`: prompt tokens × input price + the output cap × `n` choices × output
 *   price; a short prompt's tokens bounded by its bytes, counted exactly when that bound does not
 *   fit) is reserved atomically. When it does not fit, "serve what fits"
 *   (`overflow: "cap"`, the default): if what remains pays for the prompt and at least
 *   `minOutputTokens` per choice, the request goes out with its output limit lowered to what the
 *   budget can pay (the call rebuilt in the client's dialect and the provider's field), that capped
 *   cost is reserved, and the response carries `x-tollgate-max-tokens-capped`. Otherwise (or with
 *   `overflow: "refuse"`) 402 `budget_exceeded` with `x-should-retry: false`, and nothing is forwarded.
 *   Only a model call reserves: a token count sent to the provider's own endpoint (Anthropic's
 *   `count_tokens`, natively) bills nothing, so an over-budget user may still count tokens.
 * - `onResponseEnd` (settlement, after pricing set `ex.cost`): the reservation becomes the actual
 *   cost, or is released when nothing was billed. Every user's spend is recorded, limited or not, so
 *   `GET /api/account` can show it.
 *
 * - Alerts (`alerts.ts`, `alert-delivery.ts`): a settlement whose spend crosses one of the user's
 *   alert thresholds records the alert in the same transaction as the spend, once per threshold and
 *   period; a background job POSTs it, signed, to the manifest's `alerts.webhookUrl`, with retries.
 *
 * Where the counts live: in this process (`ledger.ts`; synchronous on SQLite, and on PostgreSQL
 * once the user's row is loaded), or, with the manifest's
 * `coordination` naming a Redis, shared by every replica (`shared-ledger.ts` over
 * `ctx.budgetCounters`), where reservations are atomic across replicas, expire after a TTL, and a
 * request may get 503 `coordination_unavailable` while Redis is unreachable (fail closed).
 *
 * A response longer than its reservation (no `max_tokens`, a long answer) is still billed in full, so
 * spend can pass the limit by at most that difference; the next request is then refused.
 */
import type { Plugin, PluginContext } from '../../core/plugin.ts';
import { isModelOperation } from '../../core/dialects/index.ts';
import { definePlugin } from '../../core/plugin.ts';
import type { Exchange, Principal, Target } from '../../core/exchange.ts';
import type { ModelCall } from '../../core/upstream/upstream-call.ts';
import { budgetExceeded } from '../../core/errors.ts';
import { worstCaseTokens } from '../../core/tokens/worst-case.ts';
import { budgetSchema, type BudgetConfig } from './schema.ts';
import { createBudgetLedger, type LedgerSeam, type Reservation } from './ledger.ts';
import { then, type MaybePromise } from '../../core/runtime/maybe-promise.ts';
import { createSharedBudgetLedger } from './shared-ledger.ts';
import { reserveJoint, type JointLedgers } from './joint-reserve.ts';
import type { BudgetService, BudgetStatus, PriceBook } from '../../core/services.ts';
import type { ModelPrice } from '../../core/money/price-table.ts';
import { createWriteBehind, type WriteBehindSettings } from '../../core/request-log/write-behind.ts';
import { createWriteTarget } from '../../core/request-log/write-target.ts';
import { createAlertFiring } from './alerts.ts';
import { createAlertDelivery, type AlertDelivery } from './alert-delivery.ts';

/** The budget's own write-behind queue, when no logger provides one: the logger's defaults. */
const OWN_QUEUE: WriteBehindSettings = { batchSize: 200, flushIntervalMs: 50, maxQueueSize: 100_000 };

interface BudgetState {
  reservation: Reservation | null;
  /** The team's reservation of a team member's request (schema v23). */
  teamReservation: Reservation | null;
}

/**
 * The budgets a request is held against: its user's, and its team's when the user has one (team
 * undefined when none or unknown). Amounts nano-USD.
 */
interface Statuses {
  user: BudgetStatus | undefined;
  team: BudgetStatus | undefined;
}

/** What remains of the tighter of the limited budgets; null when neither is limited. */
function remainingOf(statuses: Statuses): number | null {
  let remaining: number | null = null;
  for (const status of [statuses.user, statuses.team]) {
    if (!status || status.limitNanos === null) continue;
    const own = status.remainingNanos ?? 0;
    remaining = remaining === null ? own : Math.min(remaining, own);
  }
  return remaining;
}

/**
 * What a reservation holds (`plan`): its amount, the output cap that makes it fit, whether the model
 * is unpriced, and whether the amount counts a short prompt by its byte bound (`promptBound`) rather
 * than by its tokens.
 */
interface ReservationPlan {
  amountNanos: number;
  capTokens: number | null;
  unpriced: boolean;
  promptBound: boolean;
}

/** The reservation of a model without a price: nothing. */
const UNPRICED: ReservationPlan = { amountNanos: 0, capTokens: null, unpriced: true, promptBound: false };

/**
 * The 402 message: when the budget resets, and no figures (docs/contract.md). `team`: the name of the
 * team whose budget refused (the user's own did not).
 */
export function budgetMessage(status: BudgetStatus, exhausted: boolean, team?: string): string {
  const whose = team === undefined ? 'your budget' : `the budget of your team "${team}"`;
  const what = exhausted
    ? `${team === undefined ? 'Your budget' : `The budget of your team "${team}"`} for this period is used up.`
    : `This request could cost more than what remains of ${whose} for this period; a lower max_tokens may fit.`;
  const when = status.window.resetsAtMs === null
    ? 'This budget does not reset; ask an operator to raise it.'
    : `It resets at ${new Date(status.window.resetsAtMs).toISOString()}.`;
  return `${what} ${when}`;
}

function exhausted(status: BudgetStatus): boolean {
  return status.limitNanos !== null && status.spentNanos >= status.limitNanos;
}

/** What one budget plugin is wired with: built once in `createBudget`, read by every request. */
interface Budget {
  config: BudgetConfig;
  ctx: PluginContext;
  /** The ledger reservations go through: `local`, or the Redis-shared one on top of it. */
  ledger: LedgerSeam;
  /** This process's own ledger (in one process, the only one). */
  local: ReturnType<typeof createBudgetLedger>;
  /** The teams' ledgers, as `ledger` and `local` for users. */
  teamLedger: LedgerSeam;
  teamLocal: ReturnType<typeof createBudgetLedger>;
  joint: JointLedgers;
}

function createBudget(config: BudgetConfig, ctx: PluginContext): Plugin<BudgetState> {
  // Spends go through the logger's write-behind queue, to commit with their log rows; without the
  // logger in the manifest the budget keeps its own queue (same defaults).
  const shared = ctx.services.get('writeBehind');
  const writes = shared ?? createWriteBehind(createWriteTarget(ctx.store), OWN_QUEUE, ctx.log);
  const local = createBudgetLedger(ctx.store, config.timeZone, writes);
  const teamLocal = createBudgetLedger(ctx.store, config.timeZone, writes, 'team');
  const sharedUsers = ctx.budgetCounters ? createSharedBudgetLedger(local, ctx.budgetCounters) : null;
  const sharedTeams = ctx.budgetCounters ? createSharedBudgetLedger(teamLocal, ctx.budgetCounters, 'team') : null;
  const ledger: LedgerSeam = sharedUsers ?? local;
  const teamLedger: LedgerSeam = sharedTeams ?? teamLocal;
  const joint: JointLedgers = { users: ledger, teams: teamLedger, shared: sharedUsers && sharedTeams && { users: sharedUsers, teams: sharedTeams } };
  const service: BudgetService = {
    timeZone: config.timeZone,
    status: async (userId) => {
      const nowMs = ctx.clock();
      if (ledger === local) return local.status(userId, nowMs);
      // Shared by replicas, this replica's ledger holds the spend it read from the database plus its
      // own settlements since, so the account and admin views read the shared counts (every
      // replica's spend and live reservations) and fall back to it only while Redis cannot answer.
      try {
        return await ledger.status(userId, nowMs);
      } catch {
        return local.status(userId, nowMs);
      }
    },
    teamStatus: async (teamId) => {
      const nowMs = ctx.clock();
      if (teamLedger === teamLocal) return teamLocal.status(teamId, nowMs);
      try {
        return await teamLedger.status(teamId, nowMs);
      } catch {
        return teamLocal.status(teamId, nowMs);
      }
    },
    invalidate: (userId) => ledger.invalidate(userId),
    invalidateTeam: (teamId) => teamLedger.invalidate(teamId),
  };
  ctx.services.provide('budget', service);
  const { webhookUrl, secret } = config.alerts;
  const webhook = webhookUrl !== undefined && secret !== undefined ? Object.assign({}, config.alerts, { webhookUrl, secret }) : null;
  const alerts = createAlertFiring(config.alerts.thresholds, writes, webhook !== null);
  const delivery: AlertDelivery | null = webhook && createAlertDelivery(ctx.store, webhook, ctx.clock, ctx.log, () => ledger.flush());
  const b: Budget = { config, ctx, ledger, local, teamLedger, teamLocal, joint };

  return {
    name: 'budget',
    createState: () => ({ reservation: null, teamReservation: null }),
    onRequest(ex) {
      if (!isModelOperation(ex.operation) || !ex.principal) return;
      const team = ex.principal.team;
      return then(statusesOf(ledger, teamLedger, ex.principal, ctx.clock()), (statuses) => {
        if (statuses.user && exhausted(statuses.user)) throw budgetExceeded(budgetMessage(statuses.user, true));
        if (team && statuses.team && exhausted(statuses.team)) throw budgetExceeded(budgetMessage(statuses.team, true, team.name));
      });
    },
    beforeUpstream: (ex, state, call) => beforeUpstream(b, ex, state, call),
    onResponseEnd(ex, state) {
      const nowMs = ctx.clock();
      const costNanos = ex.cost?.totalNanos ?? 0;
      // The team's spend is recorded like the user's (same request group, same transaction as the
      // log row); its alerts are not fired yet (budget_alerts rows are per user).
      const teamSettled = state.teamReservation ? teamLedger.settle(state.teamReservation, costNanos, nowMs, ex.id) : undefined;
      state.teamReservation = null;
      if (!state.reservation) return teamSettled instanceof Promise ? teamSettled.then(() => undefined) : undefined;
      const settled = then(ledger.settle(state.reservation, costNanos, nowMs, ex.id), (change) => {
        if (change && alerts.onSpend(change, ex.id, nowMs) > 0) delivery?.wake();
      });
      state.reservation = null;
      if (teamSettled instanceof Promise) return Promise.all([teamSettled, settled]).then(() => undefined);
      return settled;
    },
    // The spends' final flush (on PostgreSQL asynchronous) is awaited: the gateway closes the store next.
    async close() {
      await delivery?.close();
      await ledger.close();
      await teamLedger.close();
      if (!shared) await writes.close();
    },
  };
}

/**
 * What to reserve for `ex`: its worst case when that fits `remainingNanos`; else, with overflow
 * "cap", the most output tokens per choice the remainder pays for (`capTokens`), if at least
 * `minOutputTokens`; else the worst case (which the ledger then refuses). Zero for an unpriced model.
 * Null when the worst case with a short prompt's byte bound does not fit: the exact count (`exact`)
 * is lower and may fit or cap less, so the caller plans again with it.
 */
function plan(b: Budget, ex: Exchange, call: ModelCall, remainingNanos: number, exact = false): ReservationPlan | null {
  const pricing = b.ctx.services.get('pricing');
  if (!pricing) return UNPRICED;
  const worst = worstCaseTokens(ex, b.ctx.tokens, b.config.maxOutputTokensEstimate, exact);
  // A model group's fallbacks may serve and bill at their own price: reserve for the dearest.
  const price = dearest(pricing, [ex.target!, ...(call.fallback?.targets ?? [])], worst.promptTokens, worst.outputTokens);
  if (!price) return UNPRICED;
  let amountNanos = pricing.maxCostNanos(price, worst.promptTokens, worst.outputTokens);
  let capTokens: number | null = null;
  if (amountNanos > remainingNanos) {
    if (worst.promptBound) return null;
    if (b.config.overflow === 'cap') {
      const costOf = (perChoice: number) => pricing.maxCostNanos(price, worst.promptTokens, perChoice * worst.choices);
      capTokens = affordableTokens(costOf, remainingNanos, b.config.minOutputTokens, worst.outputTokensPerChoice);
      if (capTokens !== null) amountNanos = costOf(capTokens);
    }
  }
  return { amountNanos, capTokens, unpriced: false, promptBound: worst.promptBound };
}

/** The user's and (for a team member) the team's budget now, read from `users` and `teams`. */
function statusesOf(users: LedgerSeam, teams: LedgerSeam, principal: Principal, nowMs: number): MaybePromise<Statuses> {
  const team = principal.team;
  return then(users.status(principal.gatewayUserId, nowMs), (user) => {
    if (!team) return { user, team: undefined };
    return then(teams.status(team.id, nowMs), (teamStatus) => ({ user, team: teamStatus }));
  });
}

const limitedOf = (statuses: Statuses) => (statuses.user?.limitNanos ?? null) !== null || (statuses.team?.limitNanos ?? null) !== null;

/**
 * Reads the user's (and team's) budget, plans and reserves (with the output cap "serve what fits"
 * sets, to the tighter of the two). In one process all synchronous: no other request can reserve in
 * between. Shared by replicas, the read and the reservation are two Redis calls, and the reservation
 * is checked again atomically there (both budgets in one script): one that no longer fits is
 * refused (402) like any other, except that one planned on a short prompt's byte bound is planned
 * again with the count first (`recount`). Loads the tokenizer when the prompt needs counting.
 */
function reserve(b: Budget, ex: Exchange, principal: Principal, target: Target, state: BudgetState, call: ModelCall, exact = false): MaybePromise<ModelCall | undefined> {
  const nowMs = b.ctx.clock();
  return then(statusesOf(b.ledger, b.teamLedger, principal, nowMs), (statuses) => reserveFor(b, ex, principal, target, state, call, nowMs, statuses, exact));
}

/**
 * `reserve`, given the in-process statuses just read at `nowMs`: in one process those are the
 * statuses `reserve` would read again (nothing ran in between), so they are passed through; shared
 * by replicas the shared counts are read.
 */
function reserveNow(b: Budget, ex: Exchange, principal: Principal, target: Target, state: BudgetState, call: ModelCall, nowMs: number, own: Statuses): MaybePromise<ModelCall | undefined> {
  if (b.ledger !== b.local) return reserve(b, ex, principal, target, state, call);
  return reserveFor(b, ex, principal, target, state, call, nowMs, own);
}

function reserveFor(b: Budget, ex: Exchange, principal: Principal, target: Target, state: BudgetState, call: ModelCall, nowMs: number, statuses: Statuses, exact = false): MaybePromise<ModelCall | undefined> {
  let amountNanos = 0;
  let capped: ModelCall | undefined;
  let promptBound = false;
  // Unlimited users (without a limited team) reserve nothing, which also spares them the local token count.
  if (limitedOf(statuses)) {
    const reservation = plan(b, ex, call, remainingOf(statuses) ?? 0, exact);
    // The prompt's byte bound does not fit: count it.
    if (reservation === null) return recount(b, ex, principal, target, state, call, nowMs, statuses);
    promptBound = reservation.promptBound;
    if (reservation.unpriced && b.config.unpricedModels === 'deny') {
      throw budgetExceeded(`The model "${target.model}" has no price, and users with a budget may only use priced models. Ask an operator to set its price.`);
    }
    amountNanos = reservation.amountNanos;
    if (reservation.capTokens !== null && call.withOutputCap) {
      capped = call.withOutputCap(reservation.capTokens);
      ex.responseHeaders['x-tollgate-max-tokens-capped'] = String(reservation.capTokens);
    }
  }
  const team = principal.team ?? null;
  // In process, synchronous from the status read to here: no other request can reserve in between.
  return then(reserveJoint(b.joint, principal.gatewayUserId, team && statuses.team ? team.id : null, amountNanos, nowMs), (result) => {
    if ('refusedBy' in result) {
      // Shared by replicas, another one may have reserved between the status read and this atomic
      // check. A reservation of a short prompt's byte bound is then planned again with the count on
      // the counts read again: it may still fit, or be capped rather than refused.
      if (promptBound) {
        const loading = b.ctx.tokens.ready();
        return loading ? loading.then(() => reserve(b, ex, principal, target, state, call, true)) : reserve(b, ex, principal, target, state, call, true);
      }
      const teamName = result.refusedBy === 'team' && team ? team.name : undefined;
      throw budgetExceeded(budgetMessage(result.status, exhausted(result.status), teamName));
    }
    state.reservation = result.user;
    state.teamReservation = result.team;
    return capped;
  });
}

/**
 * `reserveFor` with the prompt counted, on `statuses`; when the tokenizer must load first, on the
 * statuses read again once it has (another request may have reserved meanwhile).
 */
function recount(b: Budget, ex: Exchange, principal: Principal, target: Target, state: BudgetState, call: ModelCall, nowMs: number, statuses: Statuses): MaybePromise<ModelCall | undefined> {
  const loading = b.ctx.tokens.ready();
  if (loading) return loading.then(() => reserve(b, ex, principal, target, state, call, true));
  return reserveFor(b, ex, principal, target, state, call, nowMs, statuses, true);
}

/**
 * What must load before a limited user's reservation: the tokenizer when the prompt is too long for
 * its byte bound, and the targets' prices, which for a dated name may need the dataset's matcher
 * (loaded on first need too). Null when nothing must.
 */
function loadsFor(b: Budget, ex: Exchange, target: Target, call: ModelCall): Promise<unknown> | null {
  const pricing = b.ctx.services.get('pricing');
  let loads: Array<Promise<unknown>> | null = null;
  const add = (loading: Promise<unknown> | null | undefined) => {
    if (loading) (loads ??= []).push(loading);
  };
  add(b.ctx.tokens.readyFor(ex));
  add(pricing?.ready(target.provider, target.priceModel ?? target.model));
  for (const fallback of call.fallback?.targets ?? []) add(pricing?.ready(fallback.provider, fallback.model));
  return loads && Promise.all(loads);
}

function beforeUpstream(b: Budget, ex: Exchange, state: BudgetState, call: ModelCall): MaybePromise<ModelCall | undefined> {
  if (!isModelOperation(ex.operation) || !ex.principal || !ex.target || !ex.request) return;
  const { principal, target } = ex;
  const nowMs = b.ctx.clock();
  // A limited user's reservation counts a prompt too long for its byte bound: the tokenizer loads on
  // the first such request (once per process), before the synchronous read-plan-reserve, which then
  // reads the status again.
  const afterLoads = (own: Statuses) => {
    const loading = limitedOf(own) ? loadsFor(b, ex, target, call) : null;
    return loading ? loading.then(() => reserve(b, ex, principal, target, state, call)) : null;
  };
  const read = statusesOf(b.local, b.teamLocal, principal, nowMs);
  if (read instanceof Promise) return read.then((own) => afterLoads(own) ?? reserve(b, ex, principal, target, state, call));
  return afterLoads(read) ?? reserveNow(b, ex, principal, target, state, call, nowMs, read);
}

/**
 * The most output tokens per choice, between `floor` and `ceiling`, whose cost (`costOf`, monotonic)
 * fits `remainingNanos`; null when not even `floor` fits. A binary search: costs round per part, so
 * the exact answer is found without dividing prices.
 */
export function affordableTokens(costOf: (perChoice: number) => number, remainingNanos: number, floor: number, ceiling: number): number | null {
  if (ceiling < floor || costOf(floor) > remainingNanos) return null;
  let low = floor;
  let high = ceiling;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (costOf(mid) <= remainingNanos) low = mid;
    else high = mid - 1;
  }
  return low;
}

export const budget = definePlugin<BudgetConfig>({
  name: 'budget',
  description: 'Reserves each request\'s worst-case cost against the user\'s budget and settles it to the actual cost.',
  configSchema: budgetSchema,
  create: createBudget,
});

/**
 * The price among `targets` that makes the worst case dearest; null when none is priced (an unpriced
 * deployment bills nothing, so it never raises a reservation).
 */
function dearest(pricing: PriceBook, targets: readonly Target[], promptTokens: number, outputTokens: number): ModelPrice | null {
  let best: ModelPrice | null = null;
  let bestNanos = -1;
  for (const target of targets) {
    const price = pricing.priceFor(target.provider, target.priceModel ?? target.model);
    if (!price) continue;
    const nanos = pricing.maxCostNanos(price, promptTokens, outputTokens);
    if (nanos > bestNanos) [best, bestNanos] = [price, nanos];
  }
  return best;
}
