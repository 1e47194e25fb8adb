/**
 * The in-memory state machines of the router's upstream health, with times given by hand: the key
 * pool (`key-pool.ts`: fingerprints, tpm, cooling, disabling) and the circuit breaker
 * (`circuit-breaker.ts`: the failure window, the one probe, forced tries). The whole-gateway
 * behaviour is in routing-key-pool.test.ts and routing-circuit-breaker.test.ts.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createKeyPool, keyFingerprint } from '../../plugins/provider-router/routing/key-pool.ts';
import { createCircuitBreaker } from '../../plugins/provider-router/health/circuit-breaker.ts';
import { verdictOf } from '../../plugins/provider-router/health/upstream-health.ts';

const T0 = 1_800_000_000_000;

describe('key pool', () => {
  test('fingerprints show the last 4 characters of a long key and a hash prefix of a short one', () => {
    assert.equal(keyFingerprint('sk-proj-abcdefgh1234'), '…1234');
    assert.match(keyFingerprint('short'), /^#[0-9a-f]{8}$/);
    assert.ok(!keyFingerprint('short').includes('short'));
  });

  test('apiKey is the first key, empty and repeated keys are left out, and alike endings stay apart', () => {
    const pool = createKeyPool('p', 'sk-first-key-0001', ['', 'sk-first-key-0001', 'sk-other-key-0001', { key: 'sk-third-key-0003', rpm: 5 }])!;
    assert.deepEqual(pool.keys.map((k) => [k.id, k.rpm]), [['…0001', null], ['…0001#2', null], ['…0003', 5]]);
    assert.equal(createKeyPool('p', '', ['']), null);
  });

  test('a key over its tpm is skipped while another has room, and used again once the minute passed', () => {
    const pool = createKeyPool('p', '', [{ key: 'sk-tokens-limited-1', tpm: 100 }, 'sk-tokens-free-0002'])!;
    const [limited, free] = pool.keys;
    assert.equal(pool.take(T0), limited);
    pool.addTokens(limited!, 150, T0);
    assert.deepEqual([pool.take(T0 + 1), pool.take(T0 + 2), pool.take(T0 + 3)], [free, free, free]);
    assert.equal(pool.take(T0 + 60_001), limited, 'its tokens left the window');
  });

  test('a cooling key is skipped until its rest ends; when every key rests, the one whose rest ends first is taken', () => {
    const pool = createKeyPool('p', '', ['sk-cooling-key-0001', 'sk-cooling-key-0002'])!;
    const [a, b] = pool.keys;
    pool.cool(a!, T0 + 10_000);
    assert.equal(pool.stateOf(a!, T0), 'cooling');
    assert.deepEqual([pool.take(T0), pool.take(T0)], [b, b]);
    pool.cool(b!, T0 + 5_000);
    assert.equal(pool.take(T0), b, 'b rests the shorter time');
    assert.equal(pool.stateOf(a!, T0 + 10_000), 'ok');
  });

  test('a key refused on one model rests and stays enabled; refused on a second model it is disabled', () => {
    const pool = createKeyPool('p', '', ['sk-refused-key-0001', 'sk-refused-key-0002'])!;
    const [a, b] = pool.keys;
    assert.equal(pool.refuse(a!, 'gpt-4o', T0 + 60_000), false);
    assert.equal(pool.stateOf(a!, T0), 'cooling');
    assert.equal(pool.refuse(a!, 'gpt-4o', T0 + 60_000), false, 'the same model again is not a second model');
    assert.equal(pool.stateOf(a!, T0 + 60_000), 'ok', 'rested, not disabled');
    assert.equal(pool.refuse(a!, 'gpt-4o-mini', T0 + 120_000), true, 'a second model disables it');
    assert.equal(pool.stateOf(a!, T0 + 200_000), 'disabled');
    assert.equal(pool.refuse(a!, 'o3', T0 + 120_000), false, 'reported once');

    assert.equal(pool.refuse(b!, 'gpt-4o', T0), false);
    pool.served(b!);
    assert.equal(pool.refuse(b!, 'gpt-4o-mini', T0), false, 'serving in between forgets the first refusal');
    assert.equal(pool.stateOf(b!, T0), 'ok');
  });

  test('a disabled key is never taken until enabled; with every key disabled there is none', () => {
    const pool = createKeyPool('p', '', ['sk-disabled-key-001', 'sk-disabled-key-002'])!;
    const [a, b] = pool.keys;
    assert.equal(pool.disable(a!), true);
    assert.equal(pool.disable(a!), false, 'reported once');
    assert.deepEqual([pool.take(T0), pool.take(T0)], [b, b]);
    assert.equal(pool.take(T0, new Set([b!])), null, 'excluding the only usable key leaves none');
    pool.disable(b!);
    assert.equal(pool.take(T0), null);
    assert.equal(pool.enable(a!), true);
    assert.equal(pool.take(T0), a);
  });
});

describe('circuit breaker', () => {
  const settings = { failureThreshold: 3, windowMs: 1_000, cooldownMs: 5_000 };

  test('failures that left the window do not count', () => {
    const breaker = createCircuitBreaker(settings);
    breaker.failed('pass', T0);
    breaker.failed('pass', T0 + 500);
    assert.equal(breaker.failed('pass', T0 + 1_200), false, 'the first failure left the window');
    assert.equal(breaker.state(T0 + 1_200), 'closed');
    assert.equal(breaker.failed('pass', T0 + 1_300), true);
    assert.equal(breaker.state(T0 + 1_300), 'open');
  });

  test('half-open lets exactly one probe through; an abandoned probe frees the slot', () => {
    const breaker = createCircuitBreaker(settings);
    for (let i = 0; i < 3; i++) breaker.failed('pass', T0);
    assert.equal(breaker.admit(T0 + 4_999, false), null);
    assert.equal(breaker.admit(T0 + 5_000, false), 'probe');
    assert.equal(breaker.admit(T0 + 5_000, false), null, 'one probe at a time');
    assert.equal(breaker.available(T0 + 5_000), false);
    breaker.abandoned('probe');
    assert.equal(breaker.admit(T0 + 5_001, false), 'probe');
    assert.equal(breaker.succeeded('probe', T0 + 5_002), true);
    assert.equal(breaker.state(T0 + 5_002), 'closed');
  });

  test('a forced try of an open breaker counts as a probe: its failure restarts the cooldown', () => {
    const breaker = createCircuitBreaker(settings);
    for (let i = 0; i < 3; i++) breaker.failed('pass', T0);
    assert.equal(breaker.admit(T0 + 1_000, true), 'forced');
    breaker.failed('forced', T0 + 1_000);
    assert.equal(breaker.openUntilMs, T0 + 6_000);
  });
});

describe('verdicts', () => {
  test('what counts against a deployment or a key', () => {
    const table: Array<[number | null, string | null, string]> = [
      [200, null, 'ok'], [null, 'upstream_unreachable', 'failure'], [null, 'upstream_timeout', 'failure'],
      [500, 'upstream_error', 'failure'], [529, 'overloaded', 'failure'], [429, 'rate_limit_exceeded', 'rate-limited'],
      [401, 'upstream_authentication_error', 'refused'], [400, 'upstream_authentication_error', 'refused'],
      [403, 'upstream_authentication_error', 'refused'], [404, 'model_not_found', 'neutral'],
      [400, 'invalid_request', 'neutral'], [null, 'client_disconnected', 'neutral'], [200, 'client_disconnected', 'ok'],
      [null, 'upstream_busy', 'neutral'], [429, 'overloaded', 'failure'],
      // What the request caused never counts: not against the key, nor the deployment.
      [403, 'upstream_permission_error', 'neutral'], [401, 'upstream_permission_error', 'neutral'], [403, 'permission_error', 'neutral'],
    ];
    for (const [status, code, verdict] of table) assert.equal(verdictOf(status, code), verdict, `${status} ${code}`);
  });
});
