/**
 * `signInPortalUser` (the seam the OIDC callback will call) and the portal session store on a real
 * SQLite file: a user is matched by email case-insensitively, created only when `createUsers` allows
 * it, refused when disabled or ambiguous; sessions end when idle, at their absolute end, and with
 * their user.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openStore, type Store } from '../../core/store/store.ts';
import { createGatewayUser, updateGatewayUser, deleteGatewayUser } from '../../core/accounts/gateway-users.ts';
import { signInPortalUser } from '../../core/portal/portal-sign-in.ts';
import { createPortalSessionStore } from '../../core/portal/portal-sessions.ts';
import { manualClock } from '../helpers/test-gateway.ts';
import { tempDir } from '../helpers/tmp.ts';

describe('portal sign-in and sessions', () => {
  let store: Store;

  before(() => {
    store = openStore(join(tempDir(), 'tollgate.db'));
  });
  after(async () => {
    await store?.close();
  });

  test('matches the gateway user by email, whatever its case, and never creates one then', async () => {
    const carol = await createGatewayUser(store.db, { name: 'carol', email: 'Carol.Jones@Example.com' });
    for (const createUsers of [false, true]) {
      const user = await signInPortalUser(store, { email: 'carol.jones@example.COM', name: 'Someone Else' }, { createUsers });
      assert.equal(user.id, carol.id);
      assert.equal(user.name, 'carol');
    }
    const count = await store.db.selectFrom('gateway_users').select((eb) => eb.fn.countAll<number>().as('n')).where('email', 'like', '%example.com').executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 1);
  });

  test('an unknown email is refused unless createUsers, then a user is created with that email', async () => {
    await assert.rejects(signInPortalUser(store, { email: 'dave@example.com', name: 'Dave' }, { createUsers: false }), (err: any) => {
      assert.equal(err.status, 403);
      assert.equal(err.code, 'permission_denied');
      assert.match(err.message, /No gateway user has the email dave@example.com/);
      return true;
    });
    assert.equal(await store.db.selectFrom('gateway_users').select('id').where('email', '=', 'dave@example.com').executeTakeFirst(), undefined);
    const dave = await signInPortalUser(store, { email: 'dave@example.com', name: 'Dave' }, { createUsers: true });
    assert.equal(dave.name, 'Dave');
    assert.equal(dave.email, 'dave@example.com');
    const again = await signInPortalUser(store, { email: 'DAVE@example.com', name: 'Dave' }, { createUsers: true });
    assert.equal(again.id, dave.id);
  });

  test('a created user whose name is taken is named after their email', async () => {
    await createGatewayUser(store.db, { name: 'Erin', email: 'erin@other.example' });
    const erin = await signInPortalUser(store, { email: 'erin@example.com', name: 'Erin' }, { createUsers: true });
    assert.equal(erin.name, 'erin@example.com');
  });

  test('a disabled user, a shared email and a malformed email are refused', async () => {
    const frank = await createGatewayUser(store.db, { name: 'frank', email: 'frank@example.com' });
    await updateGatewayUser(store.db, frank.id, { disabled: true });
    await assert.rejects(signInPortalUser(store, { email: 'frank@example.com' }, { createUsers: true }), { status: 403, message: /disabled/ });
    await createGatewayUser(store.db, { name: 'gina-1', email: 'gina@example.com' });
    await createGatewayUser(store.db, { name: 'gina-2', email: 'GINA@example.com' });
    await assert.rejects(signInPortalUser(store, { email: 'gina@example.com' }, { createUsers: true }), { status: 403, message: /Several gateway users/ });
    await assert.rejects(signInPortalUser(store, { email: 'not an email' }, { createUsers: true }), { status: 400, code: 'invalid_request' });
  });

  test('a session verifies until idle, until its absolute end, and not after its user is deleted', async () => {
    const clock = manualClock(Date.parse('2026-11-28T10:00:00.000Z'));
    const sessions = createPortalSessionStore(store, clock, { idleMs: 30 * 60_000, maxMs: 2 * 3_600_000 });
    const user = await createGatewayUser(store.db, { name: 'hana', email: 'hana@example.com' });
    const { token, times } = await sessions.create(user.id, { ip: '10.0.0.1', userAgent: 'browser' });
    assert.equal(times.expires_at, '2026-11-28T12:00:00.000Z');
    const stored = await store.db.selectFrom('portal_sessions').selectAll().execute();
    assert.equal(stored.some((s) => s.token_hash === token), false, 'only the hash is stored');

    clock.advance(29 * 60_000);
    assert.equal((await sessions.verify(token))?.user.gatewayUserId, user.id);
    clock.advance(29 * 60_000);
    assert.ok(await sessions.verify(token), 'the previous request kept it alive');
    clock.advance(31 * 60_000);
    assert.equal(await sessions.verify(token), null, 'idle too long');

    const second = await sessions.create(user.id, { ip: null, userAgent: null });
    for (let i = 0; i < 4; i++) {
      clock.advance(25 * 60_000);
      assert.ok(await sessions.verify(second.token), `request ${i}`);
    }
    clock.advance(25 * 60_000);
    assert.equal(await sessions.verify(second.token), null, 'past its absolute end');
    assert.equal(await sessions.purgeExpired(), 0, 'verify deleted the ended sessions');

    const third = await sessions.create(user.id, { ip: null, userAgent: null });
    await deleteGatewayUser(store.db, user.id);
    assert.equal(await sessions.verify(third.token), null);
    assert.equal(await store.db.selectFrom('portal_sessions').select('token_hash').where('gateway_user_id', '=', user.id).executeTakeFirst(), undefined);
  });
});
