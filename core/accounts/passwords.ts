/**
 * Admin password hashing with scrypt (node:crypto), encoded `scrypt$N$r$p$salt$hash` (base64) so
 * parameters can be raised later without breaking stored hashes. Parameters follow OWASP's
 * password storage cheat sheet (N=2^17, r=8, p=1).
 */
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

const PARAMS = { N: 2 ** 17, r: 8, p: 1 };
const KEY_LENGTH = 32;

function scryptAsync(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, KEY_LENGTH, { ...options, maxmem: 256 * 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64'), hash.toString('base64')].join('$');
}

/**
 * A stand-in for the stored hash of an unknown username: the current parameters, a random salt and a
 * random digest that no password produces, so checking a password against it costs one scrypt like a
 * real check, without hashing anything at start (one scrypt holds 128 MB while it runs: N * r * 128 bytes).
 */
export function decoyHash(): string {
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, randomBytes(16).toString('base64'), randomBytes(KEY_LENGTH).toString('base64')].join('$');
}

/** Constant-time check of `password` against a stored `scrypt$...` hash; false for malformed hashes. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, saltB64, hashB64] = stored.split('$');
  if (scheme !== 'scrypt' || !saltB64 || !hashB64) return false;
  const expected = Buffer.from(hashB64, 'base64');
  const actual = await scryptAsync(password, Buffer.from(saltB64, 'base64'), { N: Number(n), r: Number(r), p: Number(p) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A random password for the bootstrap admin: 24 base64url characters (144 bits). */
export function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}
