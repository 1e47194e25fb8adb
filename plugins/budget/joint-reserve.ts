/**
 * A team member's reservation: the same amount (integer nano-USD) against the user's budget AND
 * their team's, all or nothing (docs/budgets-and-pricing.md "Team budgets").
 *
 * In one process the two ledgers' check-and-adds run back to back with no await between them once
 * both records are loaded (the plugin reads both statuses first), so no other request can reserve in
 * between; a team refusal gives the user's reservation straight back. Shared by replicas, both
 * limited budgets are checked and taken by ONE Redis script (`BUDGET_RESERVE_ALL`), so replicas can
 * never together pass either limit; an unlimited budget is not in Redis (nothing can refuse it) and
 * is held in this replica's ledger only, as for a user alone.
 */
import type { BudgetStatus } from '../../core/services.ts';
import type { BudgetClaim, BudgetCounts } from '../../core/coordination/budget-counters.ts';
import { isReservation, type LedgerSeam, type Reservation } from './ledger.ts';
import type { SharedLedger } from './shared-ledger.ts';
import { then, type MaybePromise } from '../../core/runtime/maybe-promise.ts';

/** The two reservations (`team` null for a user without a team), or which budget refused, with its status then. */
export type JointResult =
  | { user: Reservation; team: Reservation | null }
  | { refusedBy: 'user' | 'team'; status: BudgetStatus };

/** The user's and team's ledgers, in one process or shared (`shared` set, with both shared ledgers). */
export interface JointLedgers {
  users: LedgerSeam;
  teams: LedgerSeam;
  shared: { users: SharedLedger; teams: SharedLedger } | null;
}

/** Reserves `amountNanos` for user `userId` and team `teamId` (null = none), all or nothing. */
export function reserveJoint(ledgers: JointLedgers, userId: number, teamId: number | null, amountNanos: number, nowMs: number): MaybePromise<JointResult> {
  if (teamId === null) {
    return then(ledgers.users.reserve(userId, amountNanos, nowMs), (user) => (isReservation(user) ? { user, team: null } : { refusedBy: 'user' as const, status: user }));
  }
  if (!ledgers.shared) return reserveLocal(ledgers.users, ledgers.teams, userId, teamId, amountNanos, nowMs);
  return reserveShared(ledgers.shared.users, ledgers.shared.teams, userId, teamId, amountNanos, nowMs);
}

/** Both in this process's ledgers: the user's first, then the team's; a team refusal releases the user's. */
function reserveLocal(users: LedgerSeam, teams: LedgerSeam, userId: number, teamId: number, amountNanos: number, nowMs: number): MaybePromise<JointResult> {
  return then(users.reserve(userId, amountNanos, nowMs), (user): MaybePromise<JointResult> => {
    if (!isReservation(user)) return { refusedBy: 'user', status: user };
    return then(teams.reserve(teamId, amountNanos, nowMs), (team): JointResult => {
      if (isReservation(team)) return { user, team };
      // Nothing was spent: settling 0 only drops the reservation (no write, no request id needed);
      // `users` is this process's ledger here, which settles synchronously.
      void users.settle(user, 0, nowMs, '');
      return { refusedBy: 'team', status: team };
    });
  });
}

async function reserveShared(users: SharedLedger, teams: SharedLedger, userId: number, teamId: number, amountNanos: number, nowMs: number): Promise<JointResult> {
  const [userClaim, teamClaim] = await Promise.all([users.claimOf(userId, nowMs), teams.claimOf(teamId, nowMs)]);
  // An unknown team (deleted meanwhile) limits nothing; an unknown user reserves nothing, as alone.
  const limited: Array<{ scope: 'user' | 'team'; claim: BudgetClaim & { status: BudgetStatus } }> = [];
  if (userClaim) limited.push({ scope: 'user', claim: userClaim });
  if (teamClaim) limited.push({ scope: 'team', claim: teamClaim });
  if (limited.length === 0) return reserveLocal(users.local, teams.local, userId, teamId, amountNanos, nowMs);
  const taken = await users.counters.reserveAll(limited.map((l) => l.claim), amountNanos);
  // Unreachable, failing open: this replica's own counts decide, as in one process.
  if (!taken) return reserveLocal(users.local, teams.local, userId, teamId, amountNanos, nowMs);
  if (!taken.held) {
    const refused = limited[taken.refused]!;
    const seen: BudgetCounts = taken.counts[taken.refused]!;
    const ledger = refused.scope === 'user' ? users : teams;
    return { refusedBy: refused.scope, status: ledger.withCounts(refused.claim.status, seen) };
  }
  const heldOf = (scope: 'user' | 'team') => {
    const i = limited.findIndex((l) => l.scope === scope);
    return i < 0 ? null : taken.held![i]!;
  };
  const userHeld = heldOf('user');
  const teamHeld = heldOf('team');
  // An unlimited side is held in this replica only (as for a user alone): it cannot refuse.
  const user = userHeld ? { userId, amountNanos, held: userHeld } : await users.local.reserve(userId, amountNanos, nowMs);
  const team = teamHeld ? { userId: teamId, amountNanos, held: teamHeld } : await teams.local.reserve(teamId, amountNanos, nowMs);
  return { user: user as Reservation, team: isReservation(team) ? team : null };
}
