/**
 * Removing a call's own credentials from upstream text before it reaches a client or the log. Some
 * upstreams quote the key they were sent in an error message (a 400 or 429 that says "key sk-... is
 * not allowed"); the key is the gateway's shared one, so a user must never see it. The proxy applies
 * this to every upstream error body (all statuses, relayed or translated), every non-streamed body,
 * every translated stream event and every byte of a passed-through stream (`core/proxy/proxy.ts`).
 *
 * The credentials are read generically from the call: the values of the headers that carry keys
 * (`authorization` whole and after its scheme, `x-api-key`, `x-goog-api-key`, `api-key`,
 * `proxy-authorization`) and of the query parameters `key` / `api_key`, as sent and URL-decoded.
 * Values shorter than 8 characters are left alone: they are not secrets and would shred the text.
 */
import { GatewayError } from '../errors.ts';
import type { UpstreamRequest } from '../upstream/upstream-call.ts';

/** What a credential is replaced with. */
export const REDACTED = '[redacted]';

const CREDENTIAL_HEADERS = ['authorization', 'proxy-authorization', 'x-api-key', 'x-goog-api-key', 'api-key'];
const CREDENTIAL_QUERY_PARAMS = ['key', 'api_key'];
const MIN_SECRET_CHARS = 8;

/**
 * Credential lists of recent calls by their credential headers and query: a call's list is the same
 * for every request on one key, and building it (a set, a regex, a sort) cost more per request than
 * this lookup. Bounded: emptied when full. (The values are the credential store's own, already in
 * memory; nothing here is persisted or logged.)
 */
const recentCredentials = new Map<string, readonly string[]>();
const MAX_RECENT_CREDENTIALS = 512;

/**
 * Every credential value `call` carries, longest first (so `Bearer sk-x` goes before `sk-x`), without
 * duplicates. The list is shared between calls with the same credentials: do not modify it.
 */
export function credentialsOf(call: Pick<UpstreamRequest, 'headers' | 'path'>): readonly string[] {
  let key = '';
  for (const name of CREDENTIAL_HEADERS) {
    const value = call.headers[name];
    if (typeof value === 'string') key += `${name}\n${value}\n`;
  }
  const query = call.path.indexOf('?');
  if (query >= 0) key += call.path.slice(query);
  let found = recentCredentials.get(key);
  if (found === undefined) {
    found = Object.freeze(findCredentials(call));
    if (recentCredentials.size >= MAX_RECENT_CREDENTIALS) recentCredentials.clear();
    recentCredentials.set(key, found);
  }
  return found;
}

function findCredentials(call: Pick<UpstreamRequest, 'headers' | 'path'>): string[] {
  const found = new Set<string>();
  const add = (value: string | undefined) => {
    const trimmed = value?.trim();
    if (trimmed && trimmed.length >= MIN_SECRET_CHARS) found.add(trimmed);
  };
  for (const name of CREDENTIAL_HEADERS) {
    const value = call.headers[name];
    if (typeof value !== 'string') continue;
    add(value);
    add(/^\S+\s+(.+)$/.exec(value)?.[1]);
  }
  const query = call.path.indexOf('?');
  if (query >= 0) {
    for (const pair of call.path.slice(query + 1).split('&')) {
      const [name, raw] = pair.split('=', 2);
      if (!name || raw === undefined || !CREDENTIAL_QUERY_PARAMS.includes(name)) continue;
      add(raw);
      try {
        add(decodeURIComponent(raw));
      } catch {
        // A malformed escape: the raw value is covered.
      }
    }
  }
  return [...found].sort((a, b) => b.length - a.length);
}

/** `text` with every occurrence of each of `secrets` replaced by `[redacted]`. */
export function redactText(text: string, secrets: readonly string[]): string {
  let out = text;
  // Indexed: the lists are frozen (cached per credential), and a for-of over a frozen array makes an
  // iterator per call on Node 20; this runs for every upstream event.
  for (let i = 0; i < secrets.length; i++) {
    const secret = secrets[i]!;
    if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  return out;
}

/** `err` with its message and relayed body redacted; the same object when neither names a secret. */
export function redactError(err: GatewayError, secrets: readonly string[]): GatewayError {
  const message = redactText(err.message, secrets);
  const relayedBody = err.relayedBody === null ? null : redactText(err.relayedBody, secrets);
  if (message === err.message && relayedBody === err.relayedBody) return err;
  return new GatewayError({
    status: err.status, type: err.type, code: err.code, message, param: err.param, headers: err.headers, cause: err.cause,
    ...(relayedBody === null ? {} : { relayedBody }),
  });
}

/** Redacts a byte stream relayed as it comes; a secret split across two reads is still caught. */
export interface ByteRedactor {
  /** The bytes of `buf` that can be sent now. A tail that may begin a secret is held for the next read. */
  push(buf: Buffer): Buffer;
  /** The held tail, at the end of the stream. */
  end(): Buffer;
}

/**
 * A `ByteRedactor` for `secrets`. Only a read that ends in the first bytes of a secret is held back
 * (an SSE read ends in a newline, which begins no key), so relaying is not delayed in practice.
 */
export function createByteRedactor(secrets: readonly string[]): ByteRedactor {
  const needles = secrets.map((s) => Buffer.from(s, 'utf8'));
  const replacement = Buffer.from(REDACTED, 'utf8');
  let held: Buffer = Buffer.alloc(0);
  const replaceAll = (buf: Buffer): Buffer => {
    let out = buf;
    for (const needle of needles) {
      if (out.indexOf(needle) < 0) continue;
      const parts: Buffer[] = [];
      let from = 0;
      for (let at = out.indexOf(needle); at >= 0; at = out.indexOf(needle, from)) {
        parts.push(out.subarray(from, at), replacement);
        from = at + needle.length;
      }
      parts.push(out.subarray(from));
      out = Buffer.concat(parts);
    }
    return out;
  };
  /** Length of the longest suffix of `buf` that is a proper prefix of a secret. */
  const partialTail = (buf: Buffer): number => {
    let longest = 0;
    for (const needle of needles) {
      // Candidates start where the secret's first byte is, within its length of the end; the first is the longest.
      for (let at = Math.max(0, buf.length - needle.length + 1); at < buf.length; at++) {
        if (buf[at] !== needle[0]) continue;
        if (buf.subarray(at).equals(needle.subarray(0, buf.length - at))) {
          longest = Math.max(longest, buf.length - at);
          break;
        }
      }
    }
    return longest;
  };
  return {
    push(buf) {
      if (needles.length === 0) return buf;
      const clean = replaceAll(held.length ? Buffer.concat([held, buf]) : buf);
      const keep = partialTail(clean);
      held = Buffer.from(clean.subarray(clean.length - keep));
      return keep ? clean.subarray(0, clean.length - keep) : clean;
    },
    end() {
      const rest = held;
      held = Buffer.alloc(0);
      return rest;
    },
  };
}
