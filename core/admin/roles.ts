/**
 * Who may call which admin route (docs/admin-api.md "Roles"; the roles are `AdminRole` in
 * `context.ts`). The router asks `assertRouteAllowed` before every handler; a handler of a route marked
 * `access: 'team'` asks `assertTeamScope` for each team it reads or changes, so a team-admin reaches
 * only their own teams whatever ids they put in the path or body.
 */
import type { AdminIdentity, AdminRoute } from './context.ts';
import { roleForbidden, teamForbidden } from './session-errors.ts';

/** Whether `admin` may call `route` at all (before any team scope). */
export function routeAllowed(admin: AdminIdentity, route: AdminRoute): boolean {
  if (admin.role === 'admin' || route.access === 'any') return true;
  if (admin.role === 'viewer') return route.method === 'GET';
  return route.access === 'team';
}

/** Throws 403 `role_forbidden` when `admin`'s role may not call `route` (`path` is named in the message). */
export function assertRouteAllowed(admin: AdminIdentity, route: AdminRoute, path: string): void {
  if (!routeAllowed(admin, route)) throw roleForbidden(admin.role, route.method, path);
}

/** Whether `admin` may see or manage team `teamName`: an admin or viewer every team, a team-admin theirs. */
export function managesTeam(admin: AdminIdentity, teamName: string): boolean {
  return admin.role !== 'team-admin' || admin.teams.includes(teamName);
}

/** Throws 403 `team_forbidden` unless `managesTeam(admin, teamName)`. */
export function assertTeamScope(admin: AdminIdentity, teamName: string): void {
  if (!managesTeam(admin, teamName)) throw teamForbidden(teamName);
}
