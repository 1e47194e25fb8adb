/** Sealing credentials: AES-256-GCM round trips, tamper and context binding, keyrings, rotation files, masking. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createKeyring, keyIdOf, maskSecret, open, seal, SecretOpenError } from '../../../core/accounts/secret-box.ts';
import { commitNextKey, createKeyringSource, loadKeyring, prepareNextKey } from '../../../core/store/data-dir.ts';
import { tempDir } from '../../helpers/tmp.ts';

describe('secret box', () => {
  const keyring = createKeyring(randomBytes(32));

  test('opens what it sealed, with a fresh nonce each time', () => {
    const a = seal('sk-secret', keyring, 'ctx');
    const b = seal('sk-secret', keyring, 'ctx');
    assert.equal(open(a, keyring, 'ctx'), 'sk-secret');
    assert.notDeepEqual(a.nonce, b.nonce);
    assert.notDeepEqual(a.ciphertext, b.ciphertext);
    assert.equal(a.keyId, keyring.current.id);
    assert.match(a.keyId, /^[0-9a-f]{16}$/);
  });

  test('refuses altered ciphertext, another record\'s context, and an unknown key', () => {
    const sealed = seal('sk-secret', keyring, 'user:1');
    const altered = { ...sealed, ciphertext: Buffer.from(sealed.ciphertext) };
    altered.ciphertext[0]! ^= 1;
    assert.throws(() => open(altered, keyring, 'user:1'), SecretOpenError);
    assert.throws(() => open(sealed, keyring, 'user:2'), /failed authentication/);
    assert.throws(() => open(sealed, createKeyring(randomBytes(32)), 'user:1'), /does not hold/);
  });

  test('a keyring with an older key opens records sealed under it and seals with the new one', () => {
    const old = randomBytes(32);
    const sealed = seal('x', createKeyring(old), 'c');
    const rotated = createKeyring(randomBytes(32), [old]);
    assert.equal(open(sealed, rotated, 'c'), 'x');
    assert.notEqual(seal('x', rotated, 'c').keyId, keyIdOf(old));
  });

  test('masks secrets without revealing enough to use them', () => {
    assert.equal(maskSecret('sk-proj-abcdefghijklmnop1234'), 'sk-…1234');
    assert.equal(maskSecret('abcdefgh'), '…gh');
    assert.equal(maskSecret('abc'), '…');
  });
});

describe('keyring files', () => {
  test('a pending secret.key.next opens records until the rotation commits it', () => {
    const dir = tempDir();
    const current = loadKeyring(dir, {});
    const next = prepareNextKey(dir);
    assert.equal(statSync(join(dir, 'secret.key.next')).mode & 0o777, 0o600);
    assert.deepEqual(prepareNextKey(dir), next, 'resuming reuses the pending key');
    const during = loadKeyring(dir, {});
    assert.equal(during.current.id, current.current.id);
    assert.ok(during.all.has(keyIdOf(next)));
    commitNextKey(dir);
    assert.equal(existsSync(join(dir, 'secret.key.next')), false);
    assert.equal(loadKeyring(dir, {}).current.id, keyIdOf(next));
    assert.equal(Buffer.from(readFileSync(join(dir, 'secret.key'), 'utf8').trim(), 'base64').length, 32);
  });

  test('TOLLGATE_SECRET_PREVIOUS adds keys that open; a bad one is refused', () => {
    const dir = tempDir();
    const old = randomBytes(32);
    const env = { TOLLGATE_SECRET: randomBytes(32).toString('base64'), TOLLGATE_SECRET_PREVIOUS: old.toString('base64') };
    const source = createKeyringSource(dir, env);
    assert.ok(source.get().all.has(keyIdOf(old)));
    assert.equal(source.reload().current.id, source.get().current.id);
    assert.throws(() => loadKeyring(dir, { ...env, TOLLGATE_SECRET_PREVIOUS: 'c2hvcnQ=' }), /TOLLGATE_SECRET_PREVIOUS must be base64 of exactly 32 bytes/);
  });
});
