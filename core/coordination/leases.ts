/**
 * Leases: "only one replica does this now" for periodic work that every replica would otherwise
 * repeat (the model catalog refresh). In one process every lease is granted; with Redis
 * (`coordination/index.ts`) a lease is `SET key NX PX ttl`, held until it expires (never released
 * early: the holder's work is fresh for at least that long). A replica that cannot reach Redis is
 * granted the lease — doing the work twice is harmless, not doing it is not.
 */
export interface Leases {
  /** True when this replica holds `name` for the next `ttlMs` (it may do the work); false when another does. */
  tryAcquire(name: string, ttlMs: number): Promise<boolean>;
}

/** One process: every lease is granted. */
export const localLeases: Leases = { tryAcquire: () => Promise.resolve(true) };
