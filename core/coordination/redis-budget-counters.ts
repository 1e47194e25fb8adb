/**
 * The budget counters shared by every replica, in Redis (`budget-scripts.ts`): a reservation is
 * checked against the user's limit and taken in one atomic script, so replicas cannot together
 * reserve more than the limit; each reservation expires after `reservationTtlMs` (Redis's clock), so
 * a replica that dies mid-request holds nothing beyond it; settlement drops it and adds the actual
 * cost to the period's spend (INCRBY, integer nano-USD).
 *
 * Keys: `tollgate:budget:<userId>:<periodStartIso>` (the spend) and the same with `:held` (the
 * reservations). The period start is computed by the gateway in the configured time zone
 * (`calendar-period.ts`) from its own clock, not Redis's: the calendar rules live in TypeScript, and
 * replicas' clocks (NTP) differ by far less than a second, so at a period boundary at most the
 * requests of that second land in the neighbouring period. Reservation expiry, which must not depend
 * on a replica's clock, uses Redis's `TIME`.
 *
 * When Redis cannot be reached (or answers too late): fail closed throws 503
 * `coordination_unavailable`; fail open answers null (the plugin then keeps this replica's own
 * count) and logs a warning at most every 10 s. A settlement that fails is lost in Redis only: the
 * database records it, and Redis is re-seeded from the database once its keys are gone.
 */
import { randomBytes } from 'node:crypto';
import { gatewayError } from '../errors.ts';
import type { Log } from '../runtime/log.ts';
import type { BudgetClaim, BudgetCounters, BudgetCounts, BudgetKey, HeldReservation, JointTake, SpendSeed } from './budget-counters.ts';
import type { RedisConnection } from './redis-connection.ts';
import { BUDGET_READ, BUDGET_RESERVE, BUDGET_RESERVE_ALL, BUDGET_SETTLE } from './budget-scripts.ts';
import type { FailMode } from './redis-rate-counters.ts';

export interface RedisBudgetCountersOptions {
  failMode: FailMode;
  /** How long a reservation lives in Redis, ms: the most a replica that dies mid-request keeps reserved. */
  reservationTtlMs: number;
  log: Log;
}

const WARN_EVERY_MS = 10_000;

/** The Redis key of a period's spend (a team's: `tollgate:budget:team:<teamId>:<periodStartIso>`). */
export function spendKey(key: BudgetKey): string {
  return key.scope === 'team' ? `tollgate:budget:team:${key.userId}:${key.periodStartIso}` : `tollgate:budget:${key.userId}:${key.periodStartIso}`;
}

/** The Redis key of a period's live reservations. */
export function heldKey(key: BudgetKey): string {
  return `${spendKey(key)}:held`;
}

/** Builds the shared budget counters on `redis`. */
export function createRedisBudgetCounters(redis: RedisConnection, options: RedisBudgetCountersOptions): BudgetCounters {
  const { failMode, reservationTtlMs, log } = options;
  const replicaId = randomBytes(6).toString('hex');
  let seq = 0;
  let lastWarnMs = 0;

  function warn(message: string, err: unknown): void {
    const nowMs = Date.now();
    if (nowMs - lastWarnMs < WARN_EVERY_MS) return;
    lastWarnMs = nowMs;
    log.warn(message, { error: err instanceof Error ? err.message : String(err) });
  }

  /** Throws 503 (fail closed), or warns and answers null (fail open). */
  function unavailable(err: unknown): null {
    if (failMode === 'closed') throw gatewayError('coordination_unavailable', { cause: err });
    warn('budgets counted per replica: redis unreachable (coordination.failMode "open")', err);
    return null;
  }

  /** Runs `script`; when it asks for the stored spend (first value -1), runs it again with it. */
  async function seeded(script: string, keys: string[], key: BudgetKey, seed: SpendSeed, rest: Array<string | number>): Promise<number[]> {
    const reply = (await redis.run(script, keys, ['-1', key.keepMs, ...rest])) as number[];
    if (reply[0] !== -1) return reply;
    const stored = Math.max(0, Math.round(await seed()));
    return (await redis.run(script, keys, [String(stored), key.keepMs, ...rest])) as number[];
  }

  const counts = (reply: number[]): BudgetCounts => ({ spentNanos: Number(reply[1]), reservedNanos: Number(reply[2]) });

  /**
   * `BUDGET_RESERVE_ALL` over `claims`: each budget whose spend Redis lacks is seeded (read from
   * the database) and the script run again, so at most claims + 1 runs; the last is the atomic one.
   */
  async function reserveAllOnce(claims: readonly BudgetClaim[], id: string, amount: number): Promise<JointTake> {
    const keys = claims.flatMap((c) => [spendKey(c.key), heldKey(c.key)]);
    const seeds: string[] = claims.map(() => '-1');
    for (let attempt = 0; attempt <= claims.length; attempt++) {
      const args = [id, amount, reservationTtlMs, ...claims.flatMap((c, i) => [seeds[i]!, c.key.keepMs, Math.floor(c.limitNanos)])];
      const reply = (await redis.run(BUDGET_RESERVE_ALL, keys, args)) as number[];
      if (reply[0] === -1) {
        const i = Number(reply[1]) - 1;
        seeds[i] = String(Math.max(0, Math.round(await claims[i]!.seed())));
        continue;
      }
      const seen = claims.map((_, i) => ({ spentNanos: Number(reply[2 + 2 * i]), reservedNanos: Number(reply[3 + 2 * i]) }));
      if (reply[0] !== 1) return { held: null, refused: Number(reply[1]) - 1, counts: seen };
      return { held: claims.map((c) => ({ key: c.key, id })), refused: -1, counts: seen };
    }
    throw new Error('budget reservation: redis kept asking for a seed');
  }

  return {
    async read(key, seed) {
      try {
        return counts(await seeded(BUDGET_READ, [spendKey(key), heldKey(key)], key, seed, []));
      } catch (err) {
        return unavailable(err);
      }
    },
    async reserve(key, amountNanos, limitNanos, seed) {
      const amount = Math.max(0, Math.round(amountNanos));
      const id = `${replicaId}:${++seq}:${amount}`;
      try {
        const reply = await seeded(BUDGET_RESERVE, [spendKey(key), heldKey(key)], key, seed, [id, amount, Math.floor(limitNanos), reservationTtlMs]);
        const held: HeldReservation | null = reply[0] === 1 ? { key, id } : null;
        return { held, counts: counts(reply) };
      } catch (err) {
        return unavailable(err);
      }
    },
    async reserveAll(claims, amountNanos) {
      const amount = Math.max(0, Math.round(amountNanos));
      const id = `${replicaId}:${++seq}:${amount}`;
      try {
        return await reserveAllOnce(claims, id, amount);
      } catch (err) {
        return unavailable(err);
      }
    },
    async settle(held, key, actualNanos, seed) {
      const actual = Math.max(0, Math.round(actualNanos));
      try {
        const reply = await seeded(BUDGET_SETTLE, [spendKey(key), heldKey(held.key)], key, seed, [held.id, String(actual)]);
        return Number(reply[1]);
      } catch (err) {
        warn('budget settlement not counted in redis: redis unreachable (the database records it)', err);
        return null;
      }
    },
  };
}
