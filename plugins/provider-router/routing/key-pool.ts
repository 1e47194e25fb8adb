/**
 * A provider's pool of shared API keys (manifest `apiKeys`, docs/routing.md), held in
 * memory. Each request takes one key: round-robin over the keys that are usable now (not cooling,
 * not disabled, under their own `rpm` / `tpm` over the last minute); when none has room, the one
 * over its limit with the most room relative to it, else the cooling key whose cooldown ends first
 * (the upstream decides then; a pool must not refuse everything on a guess). A key the upstream
 * refused as a key (`refuse`: invalid, revoked, its account disabled) rests like a 429'd one, and is
 * disabled only once refused on a second model since it last served: one model's refusal could still
 * be about that model (a misread answer), and no one request may take a shared key out for every
 * user. A disabled key is never taken until `enable`; a restart enables every key again (nothing is
 * persisted: the key in the manifest may have been fixed meanwhile).
 *
 * Keys are named by a fingerprint (`…` + last four characters, or a hash prefix for a short key),
 * never by the key itself: fingerprints are what logs, metrics and the admin API show.
 */
import { createHash } from 'node:crypto';

/** One pool entry of the manifest: the key, or the key with its own per-minute limits. */
export type PoolKeyConfig = string | { key: string; rpm?: number; tpm?: number };

/** `ok`: usable; `cooling`: rested after a 429 or a refusal until `coolingUntilMs`; `disabled`: refused by the upstream on two models, until an admin enables it. */
export type KeyState = 'ok' | 'cooling' | 'disabled';

export interface PoolKey {
  /** The provider id the pool belongs to. */
  readonly provider: string;
  /** The fingerprint shown instead of the key (`…a1b2`); unique within the pool. */
  readonly id: string;
  /** The secret itself: sent upstream, never logged or shown. */
  readonly apiKey: string;
  /** Requests per minute this key may take; null = no limit of ours. */
  readonly rpm: number | null;
  /** Tokens per minute this key may take (counted when answers end); null = no limit of ours. */
  readonly tpm: number | null;
}

export interface KeyPool {
  readonly provider: string;
  readonly keys: readonly PoolKey[];
  /**
   * The key for the next request at `nowMs` (ms since the epoch), leaving out `exclude` (keys this
   * request already tried), and counting the request against it. Null when every key left is
   * disabled or excluded.
   */
  take(nowMs: number, exclude?: ReadonlySet<PoolKey>): PoolKey | null;
  /** Adds `tokens` an answer of `key` used, at `nowMs`, to its per-minute tally. */
  addTokens(key: PoolKey, tokens: number, nowMs: number): void;
  /** Rests `key` until `untilMs` (a 429); an earlier end than a rest already set is ignored. */
  cool(key: PoolKey, untilMs: number): void;
  /**
   * The upstream refused `key` itself on a request for `model`: it rests until `restUntilMs` (ms since
   * the epoch), and is disabled (until `enable`) when it was refused on another model since it last
   * served. True when this disabled it.
   */
  refuse(key: PoolKey, model: string, restUntilMs: number): boolean;
  /** `key` served an answer: the refusals before it no longer count towards disabling it. */
  served(key: PoolKey): void;
  /** Takes `key` out until `enable`. True when it was not disabled before. */
  disable(key: PoolKey): boolean;
  /** Puts `key` back (admin action): not disabled, not cooling. True when it was disabled or cooling. */
  enable(key: PoolKey): boolean;
  stateOf(key: PoolKey, nowMs: number): KeyState;
  /** When a cooling key is usable again, ms since the epoch; null when it is not cooling. */
  coolingUntil(key: PoolKey, nowMs: number): number | null;
  /** Requests and tokens `key` took in the minute before `nowMs`. */
  usage(key: PoolKey, nowMs: number): { requests: number; tokens: number };
}

const MINUTE_MS = 60_000;

/** What the logs and metrics call a key: `…` + its last 4 characters, or `#` + 8 hex of its SHA-256 when it is too short to show any of it. */
export function keyFingerprint(apiKey: string): string {
  if (apiKey.length >= 12) return `…${apiKey.slice(-4)}`;
  return `#${createHash('sha256').update(apiKey).digest('hex').slice(0, 8)}`;
}

interface KeyTally {
  /** Request start times of the last minute, oldest first. */
  requests: number[];
  /** [time, tokens] of answers ended in the last minute, oldest first. */
  tokens: Array<[number, number]>;
  tokenSum: number;
  coolingUntilMs: number;
  disabled: boolean;
  /** The model of the upstream's refusal of this key since it last served; null when none. */
  refusedOn: string | null;
}

/**
 * The pool of provider `provider` from its `apiKey` (the first key, when set) and `apiKeys`. Empty
 * keys (an unset `${NAME:-}`) and repeats are left out. Null when fewer than one key remains.
 */
export function createKeyPool(provider: string, apiKey: string, apiKeys: readonly PoolKeyConfig[]): KeyPool | null {
  const entries = [...(apiKey ? [{ key: apiKey }] : []), ...apiKeys.map((k) => (typeof k === 'string' ? { key: k } : k))];
  const keys: PoolKey[] = [];
  const seen = new Set<string>();
  for (const entry of entries) {
    if (!entry.key || seen.has(entry.key)) continue;
    seen.add(entry.key);
    let id = keyFingerprint(entry.key);
    // Two keys ending alike stay apart by their position.
    if (keys.some((k) => k.id === id)) id = `${id}#${keys.length + 1}`;
    keys.push({ provider, id, apiKey: entry.key, rpm: entry.rpm ?? null, tpm: entry.tpm ?? null });
  }
  if (keys.length === 0) return null;
  const tallies = new Map<PoolKey, KeyTally>(keys.map((k) => [k, { requests: [], tokens: [], tokenSum: 0, coolingUntilMs: 0, disabled: false, refusedOn: null }]));
  let cursor = 0;

  function tallyOf(key: PoolKey, nowMs: number): KeyTally {
    const tally = tallies.get(key)!;
    const since = nowMs - MINUTE_MS;
    let drop = 0;
    while (drop < tally.requests.length && tally.requests[drop]! <= since) drop++;
    if (drop > 0) tally.requests.splice(0, drop);
    while (tally.tokens.length > 0 && tally.tokens[0]![0] <= since) tally.tokenSum -= tally.tokens.shift()![1];
    return tally;
  }

  /** How full `key` is against its own limits (0 = idle, ≥ 1 = at or over a limit). */
  function load(key: PoolKey, tally: KeyTally): number {
    const byRequests = key.rpm === null ? 0 : tally.requests.length / key.rpm;
    const byTokens = key.tpm === null ? 0 : tally.tokenSum / key.tpm;
    return Math.max(byRequests, byTokens);
  }

  function choose(nowMs: number, exclude: ReadonlySet<PoolKey> | undefined): PoolKey | null {
    let fullest: { key: PoolKey; load: number } | null = null;
    let soonest: { key: PoolKey; untilMs: number } | null = null;
    for (let i = 0; i < keys.length; i++) {
      const index = (cursor + i) % keys.length;
      const key = keys[index]!;
      if (exclude?.has(key)) continue;
      const tally = tallyOf(key, nowMs);
      if (tally.disabled) continue;
      if (tally.coolingUntilMs > nowMs) {
        if (!soonest || tally.coolingUntilMs < soonest.untilMs) soonest = { key, untilMs: tally.coolingUntilMs };
        continue;
      }
      const keyLoad = load(key, tally);
      if (keyLoad < 1) {
        cursor = index + 1;
        return key;
      }
      if (!fullest || keyLoad < fullest.load) fullest = { key, load: keyLoad };
    }
    return fullest?.key ?? soonest?.key ?? null;
  }

  const pool: KeyPool = {
    provider,
    keys,
    take(nowMs, exclude) {
      const key = choose(nowMs, exclude);
      if (key) tallies.get(key)!.requests.push(nowMs);
      return key;
    },
    addTokens(key, tokens, nowMs) {
      if (tokens <= 0) return;
      const tally = tallyOf(key, nowMs);
      tally.tokens.push([nowMs, tokens]);
      tally.tokenSum += tokens;
    },
    cool(key, untilMs) {
      const tally = tallies.get(key)!;
      tally.coolingUntilMs = Math.max(tally.coolingUntilMs, untilMs);
    },
    refuse(key, model, restUntilMs) {
      const tally = tallies.get(key)!;
      tally.coolingUntilMs = Math.max(tally.coolingUntilMs, restUntilMs);
      if (tally.refusedOn === null || tally.refusedOn === model) {
        tally.refusedOn = model;
        return false;
      }
      return pool.disable(key);
    },
    served(key) {
      tallies.get(key)!.refusedOn = null;
    },
    disable(key) {
      const tally = tallies.get(key)!;
      const was = tally.disabled;
      tally.disabled = true;
      return !was;
    },
    enable(key) {
      const tally = tallies.get(key)!;
      const changed = tally.disabled || tally.coolingUntilMs > 0;
      tally.disabled = false;
      tally.coolingUntilMs = 0;
      tally.refusedOn = null;
      return changed;
    },
    stateOf(key, nowMs) {
      const tally = tallies.get(key)!;
      if (tally.disabled) return 'disabled';
      return tally.coolingUntilMs > nowMs ? 'cooling' : 'ok';
    },
    coolingUntil(key, nowMs) {
      const until = tallies.get(key)!.coolingUntilMs;
      return until > nowMs ? until : null;
    },
    usage(key, nowMs) {
      const tally = tallyOf(key, nowMs);
      return { requests: tally.requests.length, tokens: tally.tokenSum };
    },
  };
  return pool;
}
