/**
 * The attempts of one model call: the deployments in the picker's order, then (with
 * `retriesPerDeployment`) further rounds over them after a backoff, at most `maxAttempts` in all and
 * none starting after `deadlineMs`. The first usable deployment serves the first attempt
 * (`firstAttempt`); the rest are handed to the core as a `FallbackPlan`.
 *
 * A deployment that cannot take the request (unknown provider, no credential, a request it cannot
 * translate) is skipped; when none can, the first one's error answers, as for a plain model. The
 * router's per-request state holds the in-flight count of the deployment being tried, so the
 * `balance` strategy sees busy deployments; it moves with each attempt and ends with the response.
 *
 * Every failed attempt is reported first (`settle`: breakers and key pools learn of it). A failure
 * that was the key's (a pooled key answering 429, or refused as a key) is tried again on the same
 * deployment with another key of its pool, when one is left and `maxAttempts` allows, before moving on.
 */
import type { Exchange, Target } from '../../../core/exchange.ts';
import type { ModelCall } from '../../../core/upstream/upstream-call.ts';
import type { FailedAttempt, FallbackPlan } from '../../../core/upstream/upstream-call.ts';
import type { Deployment, DeploymentPicker } from './model-groups.ts';
import { backoffMs, isRetryable } from './retry-policy.ts';
import type { RetryConfig } from '../schema.ts';
import type { MaybePromise } from '../../../core/runtime/maybe-promise.ts';

/** The router's state for one exchange: ends the current attempt's in-flight count. */
export interface AttemptState {
  release: (() => void) | null;
}

/** Builds the call for one deployment, setting `ex.target`; throws (or rejects with) the contract's error when it cannot. */
export type BuildAttempt = (deployment: Deployment) => MaybePromise<ModelCall>;

export interface AttemptDeps {
  picker: DeploymentPicker;
  retry: RetryConfig;
  retryOnStatus: ReadonlySet<number>;
  build: BuildAttempt;
  /**
   * Reports a failed attempt (before any retry is decided); true when its key, not its deployment,
   * was at fault and the same deployment may be tried with another key of its pool.
   */
  settle(ex: Exchange, failed: FailedAttempt): boolean;
  /** Waits `ms` unless `signal` aborts first; resolves either way. */
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  /** The model whose price applies to a provider's model (`Provider.priceModelOf`); absent = the model itself. */
  priceModelOf?: (provider: string, model: string) => string;
  random?: () => number;
}

/**
 * The first attempt's call, with the plan for the next ones attached (`call.fallback`). Throws (or
 * rejects with) the first deployment's error when no deployment can take the request. Synchronous
 * while `deps.build` is (a `provider/model` target with cached credentials: almost every request),
 * so the pipeline spends no promise on it (`core/runtime/maybe-promise.ts`).
 */
export function firstAttempt(ex: Exchange, deployments: readonly Deployment[], state: AttemptState, deps: AttemptDeps): MaybePromise<ModelCall> {
  let firstError: unknown = null;
  for (let i = 0; i < deployments.length; i++) {
    let built: MaybePromise<ModelCall>;
    try {
      built = deps.build(deployments[i]!);
      if (!(built instanceof Promise)) return withPlan(built, i, deployments, state, deps);
    } catch (err) {
      firstError ??= err;
      continue;
    }
    return builtLater(built, i, firstError, deployments, state, deps);
  }
  throw firstError;
}

/** `firstAttempt` once a build returned a promise: awaits it, and the later deployments' builds. */
async function builtLater(
  built: Promise<ModelCall>, index: number, firstError: unknown, deployments: readonly Deployment[], state: AttemptState, deps: AttemptDeps,
): Promise<ModelCall> {
  for (let i = index; i < deployments.length; i++) {
    try {
      return withPlan(await (i === index ? built : deps.build(deployments[i]!)), i, deployments, state, deps);
    } catch (err) {
      firstError ??= err;
    }
  }
  throw firstError;
}

/** The first attempt's call on `deployments[index]`: counted in flight, with its fallback plan. */
function withPlan(call: ModelCall, index: number, deployments: readonly Deployment[], state: AttemptState, deps: AttemptDeps): ModelCall {
  state.release = deps.picker.begin(deployments[index]!);
  // Even a single slot has a plan: it reports the failure and may retry on another pooled key.
  call.fallback = createPlan(deployments, index, state, deps);
  return call;
}

interface Slot {
  deployment: Deployment;
  round: number;
}

/** Every slot an attempt may use, in order: each round over the deployments, capped at `maxAttempts`. */
function scheduleOf(deployments: readonly Deployment[], retry: RetryConfig): Slot[] {
  const slots: Slot[] = [];
  for (let round = 0; round <= retry.retriesPerDeployment; round++) {
    for (const deployment of deployments) slots.push({ deployment, round });
  }
  return slots;
}

const NO_TARGETS: readonly Target[] = Object.freeze([]);

/**
 * The plan after the first attempt on `deployments[started]`. Its schedule is built on the first
 * fallback, not per request: almost every request is served by its first attempt.
 */
function createPlan(deployments: readonly Deployment[], started: number, state: AttemptState, deps: AttemptDeps): FallbackPlan {
  // Round 0 lists the deployments in order, so the first attempt's slot is `started` either way.
  let position = started;
  let schedule: Slot[] | null = null;
  /** Slots whose deployment cannot take this request: not tried again in a later round. */
  let unusable: Set<Deployment> | null = null;
  const first = deployments[started]!;
  // The deployments a later attempt may use (for the budget's dearest price), in the schedule's order:
  // the rest of round 0, then (with further rounds) those before the first. With one deployment, none.
  const later = deps.retry.retriesPerDeployment > 0 ? [...deployments.slice(started + 1), ...deployments.slice(0, started)] : deployments.slice(started + 1);
  const targets = deployments.length === 1 ? NO_TARGETS
    : [...new Set(later.filter((d) => d !== first))].map((deployment) => targetOf(deployment.target, deps.priceModelOf));
  return {
    targets,
    async next(ex: Exchange, failed: FailedAttempt): Promise<ModelCall | null> {
      const otherKey = deps.settle(ex, failed);
      state.release?.();
      state.release = null;
      if (failed.attempts >= deps.retry.maxAttempts) return null;
      schedule ??= scheduleOf(deployments, deps.retry);
      unusable ??= new Set(deployments.slice(0, started));
      if (otherKey && !pastDeadline(ex, deps.retry)) {
        const again = await attemptOn(schedule[position]!.deployment, state, deps);
        if (again) return again;
      }
      if (!isRetryable(failed, deps.retryOnStatus)) return null;
      const round = schedule[position]!.round;
      while (++position < schedule.length) {
        const slot = schedule[position]!;
        if (unusable.has(slot.deployment)) continue;
        if (slot.round > round && !(await waited(ex, slot.round, failed, deps))) return null;
        if (pastDeadline(ex, deps.retry)) return null;
        const call = await attemptOn(slot.deployment, state, deps);
        if (call) return call;
        unusable.add(slot.deployment);
      }
      return null;
    },
  };
}

/** The call of an attempt on `deployment`, counted in flight; null when it cannot take the request. */
async function attemptOn(deployment: Deployment, state: AttemptState, deps: AttemptDeps): Promise<ModelCall | null> {
  try {
    const call = await deps.build(deployment);
    state.release = deps.picker.begin(deployment);
    return call;
  } catch {
    return null;
  }
}

/** Waits the backoff before a new round; false when the wait is too long, or the client left. */
async function waited(ex: Exchange, round: number, failed: FailedAttempt, deps: AttemptDeps): Promise<boolean> {
  const ms = backoffMs(round, failed, deps.retry, deps.random);
  if (ms === null) return false;
  if (performance.now() + ms - ex.startedAtPerfMs > deps.retry.deadlineMs) return false;
  if (ms > 0) await deps.sleep(ms, ex.signal);
  return !ex.signal.aborted;
}

function pastDeadline(ex: Exchange, retry: RetryConfig): boolean {
  return performance.now() - ex.startedAtPerfMs > retry.deadlineMs;
}

/** `provider/model` as a target (the model may itself contain slashes). */
function targetOf(providerModel: string, priceModelOf?: AttemptDeps['priceModelOf']): Target {
  const slash = providerModel.indexOf('/');
  const target: Target = { provider: providerModel.slice(0, slash), model: providerModel.slice(slash + 1) };
  const priceModel = priceModelOf?.(target.provider, target.model);
  if (priceModel !== undefined && priceModel !== target.model) target.priceModel = priceModel;
  return target;
}
