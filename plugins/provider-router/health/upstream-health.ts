/**
 * What the router knows about its upstreams' health, in memory (docs/routing.md):
 * a circuit breaker per deployment (`circuit-breaker.ts`), the key pools of the providers that have
 * `apiKeys` (`key-pool.ts`), and the recent outcomes of each (`recent-outcomes.ts`). The router
 * reports every attempt's outcome here (`settle`); this module decides what it means:
 *
 * - no answer (connect refused, timeout), a 5xx (an overloaded 429 included), or a broken answer →
 *   a failure of the deployment (its breaker counts it);
 * - 429 on a pooled key → that key rests for the upstream's retry-after, else `keyCooldownMs`;
 * - the key itself refused (the upstream-error policy's `CREDENTIAL_REFUSED`: a 401, or a body the
 *   provider says is about the key) on a pooled key → that key rests for `keyCooldownMs`, and once
 *   refused on a second model since it last served it is disabled until an admin enables it (logged
 *   once, as an error naming its fingerprint);
 * - any other 4xx, a 403 the request caused included (`REQUEST_FORBIDDEN`: OpenAI's "Project … does
 *   not have access to model …") → the request's doing: neither the deployment's nor the key's.
 *
 * An attempt with a user's own credential (its key, maybe its own base URL) tells nothing about the
 * shared deployment: it never moves the breaker (it still honours it), so one user's failing key
 * cannot send everyone else's requests elsewhere.
 *
 * It serves the state to `/metrics` (gauges read at scrape time), `/readyz` and the admin API (the
 * `upstreamHealth` service). Nothing is persisted: a restart closes every breaker and enables every key.
 */
import { Counter, Gauge } from 'prom-client';
import type { Log } from '../../../core/runtime/log.ts';
import type { MetricsRegistry } from '../../../core/runtime/metrics.ts';
import type { DeploymentHealth, PoolKeyHealth, UpstreamHealthService, UpstreamHealthSnapshot } from '../../../core/services.ts';
import { createCircuitBreaker, type Admission, type BreakerSettings, type BreakerState, type CircuitBreaker } from './circuit-breaker.ts';
import { createKeyPool, type KeyPool, type KeyState, type PoolKey, type PoolKeyConfig } from '../routing/key-pool.ts';
import { createOutcomeLog, type OutcomeLog } from './recent-outcomes.ts';
import { retryAfterMs } from '../routing/retry-policy.ts';
import { CREDENTIAL_REFUSED } from '../providers/upstream-error-policy.ts';

/** Deployments tracked beyond those the manifest names: a client may address any `provider/model`. */
const MAX_EXTRA_DEPLOYMENTS = 200;

const BREAKER_GAUGE: Record<BreakerState, number> = { closed: 0, open: 1, 'half-open': 2 };
const KEY_GAUGE: Record<KeyState, number> = { ok: 0, cooling: 1, disabled: 2 };

/** Codes of an attempt that reached no usable answer: the deployment's failure, whatever the status. */
const BROKEN = new Set(['upstream_unreachable', 'upstream_timeout', 'upstream_malformed_response', 'upstream_stream_truncated']);
/** Codes that say nothing about the upstream: the client or the gateway ended the attempt. */
const ENDED_BY_US = new Set(['client_disconnected', 'gateway_shutdown']);

export interface HealthSettings {
  circuitBreaker: BreakerSettings;
  /** How long a pooled key rests after a 429 without retry-after, ms. */
  keyCooldownMs: number;
}

/** One attempt in flight: where it went and how it was let through. */
export interface AttemptTicket {
  /** `provider/model` of the deployment. */
  readonly deployment: string;
  readonly admission: Admission;
  /** The pooled key it carries; null for a user's own, a deployment's own or a provider's single key. */
  readonly key: PoolKey | null;
  /** True when it carries the calling user's own credential: its outcome never moves the breaker. */
  readonly usersOwn?: boolean;
}

/** How one attempt ended, as the core recorded it (`UpstreamAttempt`) plus the error's headers. */
export interface AttemptOutcome {
  status: number | null;
  /** Null when it served. */
  errorCode: string | null;
  latencyMs: number;
  /** The upstream's kept headers (`retry-after`, `retry-after-ms`); empty when unknown. */
  headers: Readonly<Record<string, string>>;
}

/** `ok`, the deployment's `failure`, a key's `rate-limited` / `refused`, or `neutral` (the request's or the client's doing). */
type Verdict = 'ok' | 'failure' | 'rate-limited' | 'refused' | 'neutral';

/** What an attempt's upstream status and error code mean here (see the module doc). */
export function verdictOf(status: number | null, errorCode: string | null): Verdict {
  const answered = status !== null && status >= 200 && status < 300;
  if (errorCode === null) return 'ok';
  if (ENDED_BY_US.has(errorCode)) return answered ? 'ok' : 'neutral';
  // Read from the code, not the status: only the provider can tell a key's refusal from a request's.
  if (errorCode === CREDENTIAL_REFUSED) return 'refused';
  if (errorCode === 'overloaded') return 'failure';
  if (status === 429) return 'rate-limited';
  if (BROKEN.has(errorCode) || (status !== null && status >= 500)) return 'failure';
  return 'neutral';
}

export interface UpstreamHealth extends UpstreamHealthService {
  /** The key pool of `provider`; null when it has no `apiKeys`. */
  pool(provider: string): KeyPool | null;
  /**
   * The deployments a request may use, in the given order: those whose breaker lets a request
   * through now; when none does, only the one whose cooldown ends first, as `forced` (a gateway must
   * not refuse everything on stale state).
   */
  arrange<D extends { target: string }>(deployments: readonly D[]): { usable: D[]; forced: D | null };
  /** Lets an attempt on `deployment` through (claiming the half-open probe), or null to skip it. */
  admit(deployment: string, force: boolean): Admission | null;
  /** Records how the attempt of `ticket` ended. Returns the verdict. */
  settle(ticket: AttemptTicket, outcome: AttemptOutcome): Verdict;
  /** The attempt of `ticket` ended with no outcome (nothing was dispatched, or the client left first). */
  abandon(ticket: AttemptTicket): void;
  /** Counts `tokens` an answer used against its pooled key's `tpm`. */
  addTokens(ticket: AttemptTicket, tokens: number): void;
}

interface DeploymentEntry {
  breaker: CircuitBreaker;
  outcomes: OutcomeLog;
  /**
   * Named by the manifest, or served once: only such deployments become label values on /metrics
   * and entries of /readyz (a client-chosen model name that never served must not).
   */
  known: boolean;
  failures: number;
  opened: number;
}

interface ProviderPoolSettings {
  apiKey: string;
  apiKeys?: readonly PoolKeyConfig[];
}

/** `providers`: the manifest's provider settings; `deployments`: the `provider/model` of every group deployment (tracked from the start). */
export function createUpstreamHealth(
  settings: HealthSettings, providers: Readonly<Record<string, ProviderPoolSettings>>, deployments: readonly string[],
  deps: { clock: () => number; log: Log; metrics: MetricsRegistry },
): UpstreamHealth {
  const { clock, log } = deps;
  const pools = new Map<string, KeyPool>();
  for (const [id, provider] of Object.entries(providers)) {
    const pool = provider.apiKeys && provider.apiKeys.length > 0 ? createKeyPool(id, provider.apiKey, provider.apiKeys) : null;
    if (pool) pools.set(id, pool);
  }
  const keyOutcomes = new Map<PoolKey, OutcomeLog>();
  for (const pool of pools.values()) for (const key of pool.keys) keyOutcomes.set(key, createOutcomeLog());
  const entries = new Map<string, DeploymentEntry>();
  const newEntry = (known = false): DeploymentEntry => ({ breaker: createCircuitBreaker(settings.circuitBreaker), outcomes: createOutcomeLog(), known, failures: 0, opened: 0 });
  for (const d of deployments) entries.set(d, newEntry(true));
  const manifestCount = entries.size;
  /** Stands in for a deployment past the cap: always closed, remembers nothing. */
  const untracked = (): DeploymentEntry => newEntry();

  function entryOf(deployment: string): DeploymentEntry {
    let entry = entries.get(deployment);
    if (entry) return entry;
    if (entries.size - manifestCount >= MAX_EXTRA_DEPLOYMENTS) return untracked();
    entries.set(deployment, (entry = newEntry()));
    return entry;
  }

  /** The deployments that may be named on /metrics and /readyz (see `DeploymentEntry.known`). */
  const known = () => [...entries].filter(([, entry]) => entry.known);
  new Counter({
    name: 'tollgate_upstream_deployment_failures_total',
    help: 'Failed attempts that count against a deployment\'s circuit breaker (no answer, a 5xx, a broken answer), by provider and model (deployments of the manifest, or that served once).',
    labelNames: ['provider', 'model'] as const,
    registers: [deps.metrics],
    collect() {
      this.reset();
      for (const [deployment, entry] of known()) this.inc(labelsOf(deployment), entry.failures);
    },
  });
  new Counter({
    name: 'tollgate_upstream_circuit_opened_total',
    help: 'Times a deployment\'s circuit breaker opened (after failureThreshold failures, or a failed probe), by provider and model.',
    labelNames: ['provider', 'model'] as const,
    registers: [deps.metrics],
    collect() {
      this.reset();
      for (const [deployment, entry] of known()) this.inc(labelsOf(deployment), entry.opened);
    },
  });
  new Gauge({
    name: 'tollgate_upstream_circuit_state',
    help: 'Circuit breaker of each deployment (of the manifest, or that served once): 0 closed, 1 open (skipped during its cooldown), 2 half-open (one probe allowed).',
    labelNames: ['provider', 'model'] as const,
    registers: [deps.metrics],
    collect() {
      this.reset();
      const now = clock();
      for (const [deployment, entry] of known()) this.set(labelsOf(deployment), BREAKER_GAUGE[entry.breaker.state(now)]);
    },
  });
  new Gauge({
    name: 'tollgate_upstream_key_state',
    help: 'Each pooled provider key, by provider and fingerprint (…last 4 characters): 0 ok, 1 cooling after a 429 or a refusal of the key, 2 disabled after refusals on two models (until an admin enables it).',
    labelNames: ['provider', 'key'] as const,
    registers: [deps.metrics],
    collect() {
      this.reset();
      const now = clock();
      for (const pool of pools.values()) for (const key of pool.keys) this.set({ provider: key.provider, key: key.id }, KEY_GAUGE[pool.stateOf(key, now)]);
    },
  });

  /** `/readyz`'s keys: per provider with a pool, how many of its keys are in each state. */
  function keyCounts(now: number): Record<string, Record<PoolKeyHealth['state'], number>> {
    const counts: Record<string, Record<PoolKeyHealth['state'], number>> = {};
    for (const pool of pools.values()) {
      for (const key of pool.keys) (counts[key.provider] ??= { ok: 0, cooling: 0, disabled: 0 })[pool.stateOf(key, now)]++;
    }
    return counts;
  }

  function failDeployment(ticket: AttemptTicket, entry: DeploymentEntry, now: number): void {
    entry.failures++;
    if (!entry.breaker.failed(ticket.admission, now)) return;
    entry.opened++;
    log.warn('circuit breaker opened: the deployment is skipped while others are available', {
      deployment: ticket.deployment, until: new Date(entry.breaker.openUntilMs).toISOString(),
    });
  }

  function settleKey(ticket: AttemptTicket, verdict: Verdict, outcome: AttemptOutcome, now: number): void {
    const key = ticket.key;
    if (!key) return;
    const pool = pools.get(key.provider)!;
    if (verdict === 'ok') pool.served(key);
    else if (verdict === 'rate-limited') pool.cool(key, now + (retryAfterMs(outcome.headers) ?? settings.keyCooldownMs));
    else if (verdict === 'refused') refuseKey(pool, key, labelsOf(ticket.deployment).model, outcome, now);
  }

  function refuseKey(pool: KeyPool, key: PoolKey, model: string, outcome: AttemptOutcome, now: number): void {
    const restUntilMs = now + settings.keyCooldownMs;
    if (pool.refuse(key, model, restUntilMs)) {
      log.error('the upstream refused a pooled API key on two models; it is disabled until an admin enables it (POST /admin/api/upstream-health/keys/{provider}/{key}/enable) or the gateway restarts', {
        provider: key.provider, key: key.id, status: outcome.status, model,
      });
    } else if (pool.stateOf(key, now) !== 'disabled') {
      log.warn('the upstream rejected a pooled API key; it rests for keyCooldownMs and is disabled if rejected on another model before it serves again', {
        provider: key.provider, key: key.id, status: outcome.status, model, until: new Date(restUntilMs).toISOString(),
      });
    }
  }

  const health: UpstreamHealth = {
    pool: (provider) => pools.get(provider) ?? null,
    arrange(list) {
      const now = clock();
      const usable = list.filter((d) => entryOf(d.target).breaker.available(now));
      if (usable.length > 0 || list.length === 0) return { usable, forced: null };
      let forced = list[0]!;
      for (const d of list) if (entryOf(d.target).breaker.openUntilMs < entryOf(forced.target).breaker.openUntilMs) forced = d;
      return { usable: [forced], forced };
    },
    admit: (deployment, force) => entryOf(deployment).breaker.admit(clock(), force),
    settle(ticket, outcome) {
      const now = clock();
      const entry = entryOf(ticket.deployment);
      const verdict = verdictOf(outcome.status, outcome.errorCode);
      const error = verdict === 'ok' || verdict === 'neutral' ? null : { status: outcome.status, code: outcome.errorCode ?? 'upstream_error' };
      if (ticket.key) keyOutcomes.get(ticket.key)!.add(now, outcome.latencyMs, error);
      if (verdict === 'ok') entry.known = true;
      if (ticket.usersOwn) {
        entry.breaker.abandoned(ticket.admission);
        return verdict;
      }
      entry.outcomes.add(now, outcome.latencyMs, error);
      if (verdict === 'failure') failDeployment(ticket, entry, now);
      else if (verdict === 'ok') {
        if (entry.breaker.succeeded(ticket.admission, now)) log.info('circuit breaker closed after a successful probe', { deployment: ticket.deployment });
      } else entry.breaker.abandoned(ticket.admission);
      settleKey(ticket, verdict, outcome, now);
      return verdict;
    },
    abandon: (ticket) => entryOf(ticket.deployment).breaker.abandoned(ticket.admission),
    addTokens(ticket, tokens) {
      if (ticket.key) pools.get(ticket.key.provider)!.addTokens(ticket.key, tokens, clock());
    },
    snapshot: () => snapshotOf(entries, pools, keyOutcomes, clock()),
    readiness() {
      const now = clock();
      return {
        deployments: Object.fromEntries(known().map(([deployment, entry]) => [deployment, entry.breaker.state(now)])),
        keys: keyCounts(now),
      };
    },
    enableKey(provider, id) {
      const key = pools.get(provider)?.keys.find((k) => k.id === id);
      if (!key) return false;
      pools.get(provider)!.enable(key);
      return true;
    },
  };
  return health;
}

function labelsOf(deployment: string): { provider: string; model: string } {
  const slash = deployment.indexOf('/');
  return slash === -1 ? { provider: '', model: deployment } : { provider: deployment.slice(0, slash), model: deployment.slice(slash + 1) };
}

const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function snapshotOf(
  entries: ReadonlyMap<string, DeploymentEntry>, pools: ReadonlyMap<string, KeyPool>, keyOutcomes: ReadonlyMap<PoolKey, OutcomeLog>, now: number,
): UpstreamHealthSnapshot {
  const deployments: DeploymentHealth[] = [...entries].map(([deployment, entry]) => {
    const state = entry.breaker.state(now);
    return {
      deployment, ...labelsOf(deployment), state, open_until: state === 'closed' ? null : isoOrNull(entry.breaker.openUntilMs),
      recent: entry.outcomes.summary(now), last_error: entry.outcomes.lastError(),
    };
  });
  const keys: PoolKeyHealth[] = [];
  for (const pool of pools.values()) {
    for (const key of pool.keys) {
      const outcomes = keyOutcomes.get(key)!;
      keys.push({
        provider: key.provider, key: key.id, state: pool.stateOf(key, now), cooling_until: isoOrNull(pool.coolingUntil(key, now)),
        rpm: key.rpm, tpm: key.tpm, last_minute: pool.usage(key, now), recent: outcomes.summary(now), last_error: outcomes.lastError(),
      });
    }
  }
  return { deployments, keys };
}
