/**
 * Authenticated encryption of stored secrets (provider credentials) with AES-256-GCM under the
 * master key: a random 12-byte nonce per record (NIST SP 800-38D's recommended IV length), the
 * 16-byte tag kept beside the ciphertext, and the id of the master key that sealed it, so a rotated
 * key can still open records sealed under the previous one until they are re-encrypted.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/** A sealed secret as stored (`provider_credentials` columns). */
export interface SealedSecret {
  ciphertext: Buffer;
  /** 12 random bytes. */
  nonce: Buffer;
  /** 16-byte GCM tag. */
  authTag: Buffer;
  /** `keyIdOf` the master key that sealed it. */
  keyId: string;
}

/** The master keys this process holds: `current` seals; any of `all` (by id) opens. */
export interface Keyring {
  readonly current: { readonly id: string; readonly key: Buffer };
  readonly all: ReadonlyMap<string, Buffer>;
}

/** A master key's public id: the first 16 hex digits of SHA-256 over it (reveals nothing usable). */
export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/** A keyring from the current key and any older ones still needed to open records. */
export function createKeyring(current: Buffer, older: Buffer[] = []): Keyring {
  const all = new Map<string, Buffer>();
  for (const key of [current, ...older]) all.set(keyIdOf(key), key);
  return { current: { id: keyIdOf(current), key: current }, all };
}

/**
 * Seals `plaintext` under the keyring's current key. `context` (e.g. `user:3/provider:anthropic`)
 * is bound as additional authenticated data, so a sealed record copied to another row fails to open.
 */
export function seal(plaintext: string, keyring: Keyring, context: string): SealedSecret {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyring.current.key, nonce);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { ciphertext, nonce, authTag: cipher.getAuthTag(), keyId: keyring.current.id };
}

/** Thrown when a sealed secret cannot be opened: unknown master key, or tampered data. */
export class SecretOpenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SecretOpenError';
  }
}

/** Opens a sealed secret. Throws `SecretOpenError` when its key is missing or the data was altered. */
export function open(sealed: SealedSecret, keyring: Keyring, context: string): string {
  const key = keyring.all.get(sealed.keyId);
  if (!key) throw new SecretOpenError(`sealed under master key ${sealed.keyId}, which this gateway does not hold`);
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, sealed.nonce);
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(sealed.authTag);
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretOpenError('the sealed data failed authentication (altered, or sealed for another record)');
  }
}

/**
 * A secret's display hint: enough to tell keys apart, never enough to use one. Keys of 16+ characters
 * show their first 3 and last 4 (`sk-…7f3a`); shorter ones only their last 2 (`…3a`).
 */
export function maskSecret(secret: string): string {
  if (secret.length >= 16) return `${secret.slice(0, 3)}…${secret.slice(-4)}`;
  if (secret.length >= 6) return `…${secret.slice(-2)}`;
  return '…';
}
