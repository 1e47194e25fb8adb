/**
 * The rate-limit counters shared by every replica, in Redis (`rate-limit-scripts.ts`): a request's
 * GCRA buckets are checked and taken in one atomic script on Redis's clock, and its concurrency
 * slots are leases with a TTL, renewed while the request runs, so a replica that dies mid-request
 * holds nothing beyond the TTL. The decisions are computed from the levels the script reports with
 * the same pure function the in-process limiter uses (`gcraDecide`), so both decide alike.
 *
 * Keys: `tollgate:rl:gcra:<bucket name>:<limit>:<periodMs>` (a hash) and `tollgate:rl:slots:<slot
 * name>` (a sorted set).
 *
 * When Redis cannot be reached (or answers too late), rpm/tpm buckets follow `failMode`: closed throws
 * 503 `coordination_unavailable`; open lets the request through without counting it and logs a
 * warning at most every 10 s. Concurrency slots follow neither: they are counted by this replica
 * alone until Redis is back, whatever the mode. A concurrency limit protects the upstream pools,
 * which a replica can still do on its own; refusing every user for it (the default limit applies to
 * all) would turn a Redis outage into a full one, and dropping it would leave the pools unguarded.
 * Settlements and releases that fail are dropped (a lease expires; a bucket refills with time).
 */
import { randomBytes } from 'node:crypto';
import { gatewayError } from '../errors.ts';
import { clampCost, type GcraDecision } from './gcra.ts';
import type { Log } from '../runtime/log.ts';
import { decisionsOf, type RateBucket, type RateCounters, type RateTake, type SlotGrant, type SlotLease, type SlotLimit } from './rate-counters.ts';
import type { RedisConnection } from './redis-connection.ts';
import { createInFlightCounter } from './in-flight-counter.ts';
import { GCRA_SETTLE, GCRA_TAKE, SLOT_ACQUIRE, SLOT_RELEASE, SLOT_RENEW } from './rate-limit-scripts.ts';

export type FailMode = 'closed' | 'open';

export interface RedisRateCountersOptions {
  failMode: FailMode;
  /** How long a concurrency lease lives without renewal, ms; renewed every third of it. */
  leaseTtlMs: number;
  log: Log;
}

const PREFIX = 'tollgate:rl:';
const WARN_EVERY_MS = 10_000;

/** The Redis key of a GCRA bucket. */
export function bucketKey(bucket: RateBucket): string {
  return `${PREFIX}gcra:${bucket.name}:${bucket.limit}:${bucket.periodMs}`;
}

/** The Redis key of a concurrency slot. */
export function slotKey(name: string): string {
  return `${PREFIX}slots:${name}`;
}

/** What the take script saw: server time, and each bucket's level (ticks) before the take. */
export interface GcraScriptResult {
  allowed: boolean;
  nowMs: number;
  levels: number[];
}

/**
 * Runs the GCRA script: `take` (all or nothing) or `peek` (no write). `units[i]` must already be
 * clamped to `[0, buckets[i].limit]`. Rejects when Redis fails.
 */
export async function runGcra(redis: RedisConnection, mode: 'take' | 'peek', buckets: readonly RateBucket[], units: readonly number[]): Promise<GcraScriptResult> {
  const args: Array<string | number> = [mode];
  buckets.forEach((b, i) => args.push(b.limit, b.periodMs, units[i]!));
  const reply = (await redis.run(GCRA_TAKE, buckets.map(bucketKey), args)) as number[];
  return { allowed: reply[0] === 1, nowMs: reply[1]!, levels: reply.slice(2) };
}

/** Runs the settle script on one bucket (`deltaUnits` an integer); resolves with the server time it used. Rejects when Redis fails. */
export async function runGcraSettle(redis: RedisConnection, bucket: RateBucket, deltaUnits: number): Promise<{ nowMs: number; levelTicks: number }> {
  const reply = (await redis.run(GCRA_SETTLE, [bucketKey(bucket)], [bucket.limit, bucket.periodMs, deltaUnits])) as number[];
  return { nowMs: reply[0]!, levelTicks: reply[1]! };
}

/** Builds the shared counters on `redis`. Starts the lease renewal timer (unref'd). */
export function createRedisRateCounters(redis: RedisConnection, options: RedisRateCountersOptions): RateCounters {
  const { failMode, leaseTtlMs, log } = options;
  const replicaId = randomBytes(6).toString('hex');
  let leaseSeq = 0;
  const held = new Map<string, SlotLease>();
  /** Slots taken while Redis was unreachable, counted here only; their leases are in `localLeases`. */
  const localSlots = createInFlightCounter();
  const localLeases = new WeakSet<SlotLease>();
  let lastWarnMs = 0;
  const lastWarnMsBy = new Map<string, number>();

  /** Throws 503 (fail closed), or logs at most every 10 s (fail open) and lets the caller go on. */
  function unavailable(op: string, err: unknown): void {
    if (failMode === 'closed') {
      throw gatewayError('coordination_unavailable', { cause: err });
    }
    const nowMs = Date.now();
    if (nowMs - lastWarnMs < WARN_EVERY_MS) return;
    lastWarnMs = nowMs;
    log.warn('rate limits not enforced: redis unreachable (coordination.failMode "open")', { op, error: err instanceof Error ? err.message : String(err) });
  }

  function dropped(op: string, err: unknown): void {
    warnThrottled(`rate-limit ${op} dropped: redis unreachable`, err);
  }

  /** Each message at most every 10 s: one saying rates go uncounted must not hide one about slots. */
  function warnThrottled(message: string, err: unknown): void {
    const nowMs = Date.now();
    if (nowMs - (lastWarnMsBy.get(message) ?? -Infinity) < WARN_EVERY_MS) return;
    lastWarnMsBy.set(message, nowMs);
    log.warn(message, { error: err instanceof Error ? err.message : String(err) });
  }

  async function renew(): Promise<void> {
    if (held.size === 0) return;
    const keys: string[] = [];
    const args: Array<string | number> = [leaseTtlMs];
    for (const lease of held.values()) {
      for (const name of lease.names) {
        keys.push(slotKey(name));
        args.push(lease.id);
      }
    }
    await redis.run(SLOT_RENEW, keys, args).catch((err: unknown) => dropped('lease renewal', err));
  }
  /** Takes `slots` in this replica's own counts (Redis unreachable): the same limits, per replica. */
  function acquireLocally(slots: readonly SlotLimit[], lease: SlotLease): SlotGrant {
    const full = slots.findIndex((slot) => localSlots.count(slot.name) >= slot.limit);
    if (full >= 0) return { lease: null, full };
    for (const slot of slots) localSlots.take(slot.name);
    localLeases.add(lease);
    return { lease, full: null };
  }

  const renewal = setInterval(() => void renew(), Math.max(100, Math.floor(leaseTtlMs / 3)));
  renewal.unref();

  return {
    shared: true,
    async take(buckets, costs): Promise<RateTake> {
      const units = buckets.map((b, i) => clampCost(costs[i]!, b.limit));
      let seen: GcraScriptResult;
      try {
        seen = await runGcra(redis, 'take', buckets, units);
      } catch (err) {
        unavailable('take', err);
        return { allowed: true, decisions: null, after: null };
      }
      const both = buckets.map((b, i) => decisionsOf(b, seen.levels[i]!, units[i]!, seen.allowed));
      return { allowed: seen.allowed, decisions: both.map((d) => d.decision), after: both.map((d) => d.after) };
    },
    async peek(buckets): Promise<GcraDecision[] | null> {
      try {
        const seen = await runGcra(redis, 'peek', buckets, buckets.map(() => 0));
        return buckets.map((b, i) => decisionsOf(b, seen.levels[i]!, 0, true).after);
      } catch (err) {
        // A status read (GET /api/account) shows "unknown" rather than failing: it admits nothing.
        dropped('status read', err);
        return null;
      }
    },
    async settle(bucket, deltaUnits) {
      const delta = Math.trunc(deltaUnits);
      if (!Number.isFinite(delta) || delta === 0) return;
      await runGcraSettle(redis, bucket, delta).catch((err: unknown) => dropped('settlement', err));
    },
    async acquire(slots) {
      const lease: SlotLease = { id: `${replicaId}:${++leaseSeq}`, names: slots.map((s) => s.name) };
      if (slots.length === 0) return { lease, full: null };
      let full: number;
      try {
        full = Number(await redis.run(SLOT_ACQUIRE, slots.map((s) => slotKey(s.name)), [lease.id, leaseTtlMs, ...slots.map((s) => s.limit)]));
      } catch (err) {
        warnThrottled('concurrency limits counted by this replica alone: redis unreachable', err);
        return acquireLocally(slots, lease);
      }
      if (full > 0) return { lease: null, full: full - 1 };
      held.set(lease.id, lease);
      return { lease, full: null };
    },
    async release(lease) {
      if (localLeases.has(lease)) {
        for (const name of lease.names) localSlots.release(name);
        return;
      }
      held.delete(lease.id);
      if (lease.names.length === 0) return;
      await redis.run(SLOT_RELEASE, lease.names.map(slotKey), [lease.id]).catch((err: unknown) => dropped('release', err));
    },
    async close() {
      clearInterval(renewal);
      held.clear();
    },
  };
}
