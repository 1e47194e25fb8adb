/**
 * The request metrics and where their numbers live between scrapes. Counters are plain numbers on a
 * per-(provider, model) tally, copied into prom-client when `/metrics` is scraped (each metric's
 * `collect`): prom-client hashes the label set on every `inc`, even through a cached `labels()`
 * child (~0.3 µs each, ten per request), while a tally costs two Map lookups and a few additions.
 * Histograms keep prom-client's buckets; a request's observations wait in a plain array on the tally
 * (`PendingObservations`) and reach prom-client at the scrape, or every `MAX_PENDING_OBSERVATIONS`
 * when nothing scrapes, so its label validation and hashing (~1-2 µs an observation) are not paid
 * on the request path.
 */
import { Counter, Gauge, Histogram, type LabelValues } from 'prom-client';
import type { MetricsRegistry } from '../../core/runtime/metrics.ts';
import type { Operation } from '../../core/exchange.ts';
import type { Log } from '../../core/runtime/log.ts';
import { usd } from '../../core/money/money.ts';
import type { MetricsConfig } from './schema.ts';

/**
 * Observations a histogram series keeps before handing them to prom-client without a scrape (8 bytes
 * each). The hand-over runs on the request that fills the series, ~0.5 µs an observation: ~0.5 ms.
 */
const MAX_PENDING_OBSERVATIONS = 1_024;

/**
 * Observations of one histogram series not yet given to prom-client. `flush` observes them through
 * the series' label child (made on the first flush: prom-client creates a series on its first observe).
 */
class PendingObservations {
  private values = new Float64Array(16);
  private size = 0;
  private child: { observe(value: number): void } | null = null;

  constructor(private readonly makeChild: () => { observe(value: number): void }) {}

  add(value: number): void {
    if (this.size === this.values.length) {
      if (this.size >= MAX_PENDING_OBSERVATIONS) this.flush();
      else {
        const grown = new Float64Array(this.size * 2);
        grown.set(this.values);
        this.values = grown;
      }
    }
    this.values[this.size++] = value;
  }

  flush(): void {
    if (this.size === 0) return;
    const child = (this.child ??= this.makeChild());
    for (let i = 0; i < this.size; i++) child.observe(this.values[i]!);
    this.size = 0;
  }
}

/** Distinct upstream error codes per provider before the rest count as `other` (codes come from upstreams). */
const MAX_ERROR_CODES = 50;

type DurationLabel = 'provider' | 'model' | 'stream';

/** What one (provider, model) pair has accumulated since start. Mutated by the plugin's hooks. */
export interface TargetTally {
  readonly provider: string;
  readonly model: string;
  /** Request counts by operation, then by final HTTP status. */
  readonly requests: Map<Operation, Map<number, number>>;
  /** True once a request with usage was counted: token and cost series are shown from then on, zeros included. */
  billed: boolean;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  cacheWriteTokens: number;
  /** Integer nano-USD; exact up to 2^53 (≈ 9 million USD). */
  costNanos: number;
  unpriced: number;
  estimated: number;
  disconnects: number;
  /** Observes a request duration, in seconds; `stream` picks the series. */
  observeDuration(stream: boolean, seconds: number): void;
  observeTtft(seconds: number): void;
  /** Hands the pending observations to prom-client (at a scrape). */
  flushObservations(): void;
}

/** Counters without labels. */
export interface GatewayTotals {
  inFlight: number;
  budgetRefusals: number;
  rateLimitRefusals: number;
}

export interface RequestMetrics {
  readonly totals: GatewayTotals;
  /**
   * The tally for a request's target. `provider === ''` means no target. `model` gets its own tally
   * only when `served` (the provider answered 2xx for it, so it is a real model) or it has one
   * already; otherwise, and past `maxModels`, the provider's `model: ""` tally is returned, so a
   * model name a client made up never becomes a label value.
   */
  tally(provider: string, model: string, served: boolean): TargetTally;
  upstreamError(provider: string, code: string): void;
  /** Counts one upstream attempt of `provider`: served, or failed (retried, or answered as the error). */
  upstreamAttempt(provider: string, served: boolean): void;
}

/** Registers every request metric in `registry` and returns the tallies they read. */
export function createRequestMetrics(registry: MetricsRegistry, config: MetricsConfig, log: Log): RequestMetrics {
  const totals: GatewayTotals = { inFlight: 0, budgetRefusals: 0, rateLimitRefusals: 0 };
  const byProvider = new Map<string, Map<string, TargetTally>>();
  const errorsByProvider = new Map<string, Map<string, number>>();
  /** Per provider: [served, failed] attempts. */
  const attemptsByProvider = new Map<string, [number, number]>();
  let modelCount = 0;
  let capWarned = false;

  function* tallies(): Generator<TargetTally> {
    for (const models of byProvider.values()) yield* models.values();
  }

  // Both histograms' scrape hands every tally's pending observations over (the second finds none).
  function flushObservations(): void {
    for (const t of tallies()) t.flushObservations();
  }

  const sorted = (bounds: readonly number[]) => [...new Set(bounds)].sort((a, b) => a - b);
  const duration = new Histogram<DurationLabel>({
    name: 'tollgate_request_duration_seconds',
    help: 'Chat completions routed to a provider (local refusals excluded): time from arrival to the last byte, in seconds.',
    labelNames: ['provider', 'model', 'stream'],
    buckets: sorted(config.durationBuckets),
    registers: [registry],
    collect: flushObservations,
  });
  const ttft = new Histogram<'provider' | 'model'>({
    name: 'tollgate_time_to_first_token_seconds',
    help: 'Streamed chat completions: time from arrival to the first chunk written to the client, in seconds.',
    labelNames: ['provider', 'model'],
    buckets: sorted(config.ttftBuckets),
    registers: [registry],
    collect: flushObservations,
  });

  function newTally(provider: string, model: string): TargetTally {
    const durations = [
      new PendingObservations(() => duration.labels(provider, model, 'false')),
      new PendingObservations(() => duration.labels(provider, model, 'true')),
    ] as const;
    const ttfts = new PendingObservations(() => ttft.labels(provider, model));
    return {
      provider, model, requests: new Map(), billed: false,
      promptTokens: 0, completionTokens: 0, cachedTokens: 0, cacheWriteTokens: 0, costNanos: 0,
      unpriced: 0, estimated: 0, disconnects: 0,
      observeDuration(stream, seconds) {
        durations[stream ? 1 : 0].add(seconds);
      },
      observeTtft(seconds) {
        ttfts.add(seconds);
      },
      flushObservations() {
        durations[0].flush();
        durations[1].flush();
        ttfts.flush();
      },
    };
  }

  function tally(provider: string, model: string, served: boolean): TargetTally {
    let models = byProvider.get(provider);
    if (!models) byProvider.set(provider, (models = new Map([['', newTally(provider, '')]])));
    const found = models.get(model);
    if (found) return found;
    if (!served) return models.get('')!;
    if (modelCount >= config.maxModels) {
      if (!capWarned) log.warn('metrics: maxModels reached; further models are counted under model ""', { maxModels: config.maxModels });
      capWarned = true;
      return models.get('')!;
    }
    modelCount++;
    const created = newTally(provider, model);
    models.set(model, created);
    return created;
  }

  function upstreamError(provider: string, code: string): void {
    let codes = errorsByProvider.get(provider);
    if (!codes) errorsByProvider.set(provider, (codes = new Map<string, number>()));
    const key = codes.has(code) || codes.size < MAX_ERROR_CODES ? code : 'other';
    codes.set(key, (codes.get(key) ?? 0) + 1);
  }

  function upstreamAttempt(provider: string, served: boolean): void {
    let counts = attemptsByProvider.get(provider);
    if (!counts) attemptsByProvider.set(provider, (counts = [0, 0]));
    counts[served ? 0 : 1]++;
  }

  registerCounters(registry, totals, tallies, errorsByProvider);
  // Labels stay few: provider ids come from the manifest, outcome is served | failed (no model: a
  // client-chosen model name must not become a label value).
  scrapedCounter(registry, 'tollgate_upstream_attempts_total',
    'Upstream attempts (retries and fallbacks before the first byte included), by provider and outcome: served, or failed (then retried on another attempt or answered as the error).',
    ['provider', 'outcome'], (add) => {
      for (const [provider, [served, failed]] of attemptsByProvider) {
        if (served > 0) add({ provider, outcome: 'served' }, served);
        if (failed > 0) add({ provider, outcome: 'failed' }, failed);
      }
    });
  new Gauge({
    name: 'tollgate_in_flight_requests',
    help: 'Authenticated requests being processed right now.',
    registers: [registry],
    collect() {
      this.set(totals.inFlight);
    },
  });
  return { totals, tally, upstreamError, upstreamAttempt };
}

type Add<L extends string> = (labels: LabelValues<L>, value: number) => void;

/** A counter whose values are copied from the tallies at each scrape. */
function scrapedCounter<L extends string>(
  registry: MetricsRegistry, name: string, help: string, labelNames: readonly L[], fill: (add: Add<L>) => void,
): void {
  new Counter<L>({
    name, help, labelNames, registers: [registry],
    collect() {
      this.reset();
      fill((labels, value) => this.inc(labels, value));
    },
  });
}

function registerCounters(
  registry: MetricsRegistry, totals: GatewayTotals, tallies: () => Iterable<TargetTally>,
  errorsByProvider: ReadonlyMap<string, ReadonlyMap<string, number>>,
): void {
  scrapedCounter(registry, 'tollgate_requests_total',
    'Requests that passed authentication, by operation, provider, model and final HTTP status (499: the client left). provider and model are "" when no target was resolved (refusals, unknown models, non-chat operations); model is "" until its provider has served it once.',
    ['operation', 'provider', 'model', 'status'], (add) => {
      for (const t of tallies()) {
        for (const [operation, byStatus] of t.requests) {
          for (const [status, n] of byStatus) add({ operation, provider: t.provider, model: t.model, status: String(status) }, n);
        }
      }
    });
  scrapedCounter(registry, 'tollgate_tokens_total',
    'Tokens of chat completions, by kind: prompt (every input token), completion, cached (cache reads) and cache_write. cached and cache_write are subsets of prompt: do not add them to it.',
    ['provider', 'model', 'kind'], (add) => {
      for (const t of tallies()) {
        if (!t.billed) continue;
        const labels = (kind: string) => ({ provider: t.provider, model: t.model, kind });
        add(labels('prompt'), t.promptTokens);
        add(labels('completion'), t.completionTokens);
        add(labels('cached'), t.cachedTokens);
        add(labels('cache_write'), t.cacheWriteTokens);
      }
    });
  scrapedCounter(registry, 'tollgate_cost_usd_total',
    'Cost of chat completions in USD, as priced when they ended (a float for display; exact integer sums are in the request log).',
    ['provider', 'model'], (add) => {
      for (const t of tallies()) if (t.billed) add({ provider: t.provider, model: t.model }, usd(t.costNanos));
    });
  const perTally = (name: string, help: string, pick: (t: TargetTally) => number) =>
    scrapedCounter(registry, name, help, ['provider', 'model'], (add) => {
      for (const t of tallies()) if (pick(t) > 0) add({ provider: t.provider, model: t.model }, pick(t));
    });
  perTally('tollgate_unpriced_requests_total',
    'Served chat completions whose model has no price: billed $0 and marked unpriced in the log. Set a price for the model.',
    (t) => t.unpriced);
  perTally('tollgate_estimated_usage_requests_total',
    'Chat completions whose token usage was counted locally because the upstream reported none or the client left mid-stream.',
    (t) => t.estimated);
  perTally('tollgate_client_disconnects_total',
    'Requests whose client left before the response was complete.',
    (t) => t.disconnects);
  scrapedCounter(registry, 'tollgate_upstream_errors_total',
    'Failed upstream calls (error answers, unreachable, timeouts, errors mid-stream), by provider and error code: the provider\'s own code when it has one, "other" past 50 distinct codes.',
    ['provider', 'code'], (add) => {
      for (const [provider, codes] of errorsByProvider) for (const [code, n] of codes) add({ provider, code }, n);
    });
  scrapedCounter(registry, 'tollgate_budget_refusals_total',
    'Requests refused with 402 because the user\'s budget could not cover them.',
    [], (add) => add({}, totals.budgetRefusals));
  scrapedCounter(registry, 'tollgate_rate_limit_refusals_total',
    'Requests refused with 429 by the gateway\'s own rate limits (an upstream\'s 429 counts as an upstream error).',
    [], (add) => add({}, totals.rateLimitRefusals));
}
