/**
 * The decoy an unknown username is checked against (`core/admin/auth-routes.ts`): made without
 * hashing (no 128 MB scrypt at start), yet with the parameters of a real hash, so a check against it
 * runs the same scrypt, and no password matches it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decoyHash, hashPassword, verifyPassword } from '../../../core/accounts/passwords.ts';

test('a decoy hash has the parameters of a real hash and matches no password', async () => {
  const real = await hashPassword('correct horse');
  const decoy = decoyHash();
  const params = (hash: string) => hash.split('$').slice(0, 4).join('$');
  assert.equal(params(decoy), params(real));
  assert.equal(decoy.split('$').length, real.split('$').length);
  assert.notEqual(decoyHash(), decoy, 'a fresh salt and digest each time');
  assert.equal(await verifyPassword('correct horse', decoy), false);
  assert.equal(await verifyPassword('correct horse', real), true);
});
