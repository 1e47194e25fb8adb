import { test } from 'node:test';
import assert from 'node:assert/strict';
import { assertRouteAllowed, assertTeamScope, managesTeam, routeAllowed } from '../../../core/admin/roles.ts';
import type { AdminIdentity, AdminRoute } from '../../../core/admin/context.ts';
import { GatewayError } from '../../../core/errors.ts';

const route = (method: AdminRoute['method'], access?: AdminRoute['access']): AdminRoute => ({ method, pattern: '/admin/api/x', access, handler: () => ({ status: 204 }) });
const who = (role: AdminIdentity['role'], teams: string[] = []): AdminIdentity => ({ id: 1, username: 'u', role, teams });

test('an admin may call every route; a viewer only reads and its own session; a team-admin only team routes', () => {
  for (const method of ['GET', 'POST', 'PATCH', 'DELETE'] as const) {
    assert.equal(routeAllowed(who('admin'), route(method)), true);
    assert.equal(routeAllowed(who('viewer'), route(method)), method === 'GET');
    assert.equal(routeAllowed(who('viewer'), route(method, 'team')), method === 'GET');
    assert.equal(routeAllowed(who('viewer'), route(method, 'any')), true);
    assert.equal(routeAllowed(who('team-admin', ['a']), route(method)), false);
    assert.equal(routeAllowed(who('team-admin', ['a']), route(method, 'team')), true);
  }
  assert.throws(() => assertRouteAllowed(who('viewer'), route('POST'), '/admin/api/users'), (err: unknown) => {
    assert.ok(err instanceof GatewayError);
    assert.equal(err.code, 'role_forbidden');
    assert.equal(err.status, 403);
    assert.match(err.message, /viewer.*POST \/admin\/api\/users/);
    return true;
  });
});

test('a team-admin manages only the teams of its session', () => {
  assert.equal(managesTeam(who('team-admin', ['search']), 'search'), true);
  assert.equal(managesTeam(who('team-admin', ['search']), 'ads'), false);
  assert.equal(managesTeam(who('viewer'), 'ads'), true);
  assert.throws(() => assertTeamScope(who('team-admin', ['search']), 'ads'), (err: unknown) => err instanceof GatewayError && err.code === 'team_forbidden' && err.status === 403);
});
