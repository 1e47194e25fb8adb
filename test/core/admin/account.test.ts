/**
 * An admin changes their own password through the admin API (`POST /admin/api/account/password`):
 * the current password is checked, the new one must be long enough, other sessions of that admin end
 * and this one stays, the old password stops working; cross-site and session-less calls are refused.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway } from '../../helpers/test-gateway.ts';
import { adminFetch, loginAdmin } from '../../helpers/admin-client.ts';
import { createAdmin } from '../../../core/accounts/admin-users.ts';
import { verifyPassword } from '../../../core/accounts/passwords.ts';

let tg: TestGateway;
let origin: string;
const ADA = { username: 'ada', password: 'ada first password' };
const NEW_PASSWORD = 'ada second password';

before(async () => {
  tg = await startTestGateway({ providers: {} });
  origin = tg.gateway.origin;
  await createAdmin(tg.gateway.store.db, ADA.username, ADA.password);
});

after(async () => {
  await tg?.close();
});

const PATH = '/admin/api/account/password';

describe('changing the password', () => {
  test('a wrong current password answers 400 with param current_password, and changes nothing', async () => {
    const ada = await loginAdmin(origin, ADA);
    const res = await ada.post(PATH, { current_password: 'not the password', new_password: NEW_PASSWORD });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.code, 'invalid_request');
    assert.equal(res.body.error.param, 'current_password');
    await loginAdmin(origin, ADA);
  });

  test('a new password under 12 characters answers 400 with param new_password', async () => {
    const ada = await loginAdmin(origin, ADA);
    const res = await ada.post(PATH, { current_password: ADA.password, new_password: 'short' });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'new_password');
    assert.match(res.body.error.message, /at least 12 characters/);
  });

  test('without a session answers 401, from another site 403', async () => {
    const anon = await adminFetch(origin, 'POST', PATH, { current_password: ADA.password, new_password: NEW_PASSWORD });
    assert.equal(anon.status, 401);
    const ada = await loginAdmin(origin, ADA);
    const foreign = await ada.post(PATH, { current_password: ADA.password, new_password: NEW_PASSWORD }, { origin: 'https://evil.example' });
    assert.equal(foreign.status, 403);
    assert.equal(foreign.body.error.code, 'origin_mismatch');
  });

  test('succeeds: this session stays, the admin\'s other sessions end, other admins\' stay, the old password fails', async () => {
    const here = await loginAdmin(origin, ADA);
    const elsewhere = await loginAdmin(origin, ADA);
    const otherAdmin = await loginAdmin(origin);
    const res = await here.post(PATH, { current_password: ADA.password, new_password: NEW_PASSWORD });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.admin.username, 'ada');
    assert.ok(res.body.other_sessions_ended >= 1);
    assert.equal((await here.get('/admin/api/me')).status, 200);
    assert.equal((await elsewhere.get('/admin/api/me')).status, 401);
    assert.equal((await otherAdmin.get('/admin/api/me')).status, 200);
    await assert.rejects(loginAdmin(origin, ADA), /401/);
    await loginAdmin(origin, { username: 'ada', password: NEW_PASSWORD });
  });
});

describe('guessing the current password (issue 39, item 8)', () => {
  const BOB = { username: 'bob', password: 'bob first password' };
  before(async () => {
    await createAdmin(tg.gateway.store.db, BOB.username, BOB.password);
  });

  test('is throttled like a login: 20 concurrent wrong guesses, 5 are checked and the rest get 429; then the right one is refused too, and so is a login', async () => {
    const bob = await loginAdmin(origin, BOB);
    const guesses = await Promise.all(Array.from({ length: 20 }, (_, i) => bob.post(PATH, { current_password: `guess number ${i}`, new_password: NEW_PASSWORD })));
    const checked = guesses.filter((g) => g.status === 400);
    const refused = guesses.filter((g) => g.status === 429);
    assert.equal(checked.length, 5, 'only the attempts within loginMaxFailures reach the password check');
    assert.ok(checked.every((g) => g.body.error.param === 'current_password'));
    assert.equal(refused.length, 15);
    assert.ok(refused.every((g) => g.body.error.code === 'too_many_login_attempts' && Number(g.headers.get('retry-after')) >= 1));

    const right = await bob.post(PATH, { current_password: BOB.password, new_password: NEW_PASSWORD });
    assert.equal(right.status, 429, 'the address that guessed stays locked out of bob');
    assert.equal(right.body.error.code, 'too_many_login_attempts');
    assert.equal((await adminFetch(origin, 'POST', '/admin/api/login', BOB)).status, 429, 'the login throttle counted the guesses');
    // Nothing changed: the old password is still bob's.
    const row = await tg.gateway.store.db.selectFrom('admin_users').select('password_hash').where('username', '=', 'bob').executeTakeFirstOrThrow();
    assert.ok(await verifyPassword(BOB.password, row.password_hash));
  });
});
