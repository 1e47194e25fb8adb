/**
 * Key pools through the whole gateway (docs/routing.md, provider `apiKeys`): requests
 * spread over a provider's keys, a key over its own rpm is skipped, a key answering 429 rests while
 * the attempt is retried on another key, a key refused as a key (401 `invalid_api_key`) rests and,
 * refused on a second model, is disabled (logged once by its fingerprint, shown on /metrics, /readyz
 * and the admin API) until an admin enables it; a 403 the request caused (a model the project may not
 * use) leaves every key alone. Keys are told apart by the Authorization header the simulator
 * received. The gateway clock is moved by hand past the rests.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createGatewayUser } from '../../core/accounts/gateway-users.ts';
import { createApiKey } from '../../core/accounts/api-keys.ts';
import { manualClock, startTestGateway, type ManualClock, type TestGateway } from '../helpers/test-gateway.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { loginAdmin, type AdminClient } from '../helpers/admin-client.ts';
import { setProviderCredential } from '../../core/accounts/provider-credentials.ts';
import { loadKeyring } from '../../core/store/data-dir.ts';

const KEYS = {
  one: 'sk-pool-key-one-1111', two: 'sk-pool-key-two-2222',
  coolA: 'sk-cool-key-aaaa-3333', coolB: 'sk-cool-key-bbbb-4444',
  badX: 'sk-bad-key-xxxx-5555', badY: 'sk-bad-key-yyyy-6666',
  limited: 'sk-limited-one-7777', open: 'sk-limited-two-8888',
  sharedA: 'sk-shared-key-aaaa-9991', sharedB: 'sk-shared-key-bbbb-9992',
};
const KEY_COOLDOWN_MS = 60_000;

let sim: OpenAISimulator;
let clock: ManualClock;
let tg: TestGateway;
let admin: AdminClient;

before(async () => {
  sim = await startOpenAISimulator();
  clock = manualClock(Date.parse('2026-03-02T10:00:00Z'));
  tg = await startTestGateway({
    clock,
    providers: {
      pool: { type: 'openai', baseUrl: sim.baseUrl, apiKeys: [KEYS.one, KEYS.two] },
      cool: { type: 'openai', baseUrl: sim.baseUrl, apiKey: KEYS.coolA, apiKeys: [KEYS.coolB] },
      bad: { type: 'openai', baseUrl: sim.baseUrl, apiKeys: [KEYS.badX, { key: KEYS.badY }] },
      limited: { type: 'openai', baseUrl: sim.baseUrl, apiKeys: [{ key: KEYS.limited, rpm: 2 }, KEYS.open] },
      shared: { type: 'openai', baseUrl: sim.baseUrl, apiKeys: [KEYS.sharedA, KEYS.sharedB] },
    },
    router: { keyCooldownMs: KEY_COOLDOWN_MS },
  });
  admin = await loginAdmin(tg.gateway.origin);
});

after(async () => {
  await tg.close();
  await sim.close();
});

const chat = (model: string) => tg.post('/chat/completions', { model, messages: [{ role: 'user', content: 'Hi' }] });

/** Requests the simulator received with `key`. */
const sentWith = (key: string) => sim.requests.filter((r) => r.path === '/v1/chat/completions' && r.headers.authorization === `Bearer ${key}`).length;

async function metrics(): Promise<string> {
  return (await fetch(`${tg.gateway.origin}/metrics`)).text();
}

describe('key pools', () => {
  test('a pool of two keys spreads 100 requests about evenly', async () => {
    for (let i = 0; i < 10; i++) {
      const results = await Promise.all(Array.from({ length: 10 }, () => chat('pool/gpt-4o-mini')));
      for (const r of results) assert.equal(r.status, 200, r.text);
    }
    const one = sentWith(KEYS.one);
    const two = sentWith(KEYS.two);
    assert.equal(one + two, 100);
    assert.ok(one >= 35 && one <= 65, `key one got ${one}`);
    assert.ok(two >= 35 && two <= 65, `key two got ${two}`);
  });

  test('a key over its own rpm is skipped while another key has room', async () => {
    for (let i = 0; i < 10; i++) assert.equal((await chat('limited/gpt-4o-mini')).status, 200);
    assert.equal(sentWith(KEYS.limited), 2, 'rpm 2: two requests within the minute');
    assert.equal(sentWith(KEYS.open), 8);
  });

  test('a key answering 429 rests, the attempt is retried on the other key, and the client gets 200', async () => {
    sim.fault({ key: KEYS.coolA }, 429, { 'retry-after': '30' });
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await chat('cool/gpt-4o-mini'));
    for (const r of results) assert.equal(r.status, 200, r.text);
    assert.equal(sentWith(KEYS.coolA), 1, 'after its 429 the key gets no more requests');
    assert.equal(sentWith(KEYS.coolB), 4);
    const retried = await Promise.all(results.map((r) => tg.logRow(r.requestId)));
    const attempts = retried.map((row) => JSON.parse(row.attempts ?? '[]') as Array<{ status: number }>).find((a) => a.length > 1)!;
    assert.deepEqual(attempts.map((a) => a.status), [429, 200]);
    assert.match(await metrics(), /tollgate_upstream_key_state\{provider="cool",key="…3333"\} 1/);
    const health = await admin.get('/admin/api/upstream-health');
    const key = health.body.keys.find((k: { key: string }) => k.key === '…3333');
    assert.equal(key.state, 'cooling');
    assert.equal(Date.parse(key.cooling_until) - clock(), 30_000, 'cooling for the retry-after asked');
    assert.equal(key.last_error.status, 429);
    sim.fault({ key: KEYS.coolA }, null);
  });

  test('a key answering 401 rests; refused again on a second model it is disabled, logged once, shown as disabled, and enabled again by an admin', async () => {
    sim.fault({ key: KEYS.badX }, 401);
    for (let i = 0; i < 4; i++) {
      const r = await chat('bad/gpt-4o-mini');
      assert.equal(r.status, 200, r.text);
    }
    assert.equal(sentWith(KEYS.badX), 1, 'a resting key gets no more requests');
    assert.equal(sentWith(KEYS.badY), 4);
    const resting = await admin.get('/admin/api/upstream-health');
    assert.equal(resting.body.keys.find((k: { key: string }) => k.key === '…5555').state, 'cooling', 'one model\'s refusal does not disable a shared key');

    clock.advance(KEY_COOLDOWN_MS + 1);
    const other = await chat('bad/gpt-4o');
    assert.equal(other.status, 200, other.text);
    assert.equal(sentWith(KEYS.badX), 2, 'tried again once rested, on another model');
    for (let i = 0; i < 2; i++) assert.equal((await chat('bad/gpt-4o-mini')).status, 200);
    assert.equal(sentWith(KEYS.badX), 2, 'a disabled key gets no more requests');

    assert.match(await metrics(), /tollgate_upstream_key_state\{provider="bad",key="…5555"\} 2/);
    const health = await admin.get('/admin/api/upstream-health');
    assert.equal(health.status, 200);
    const states = Object.fromEntries(health.body.keys.filter((k: { provider: string }) => k.provider === 'bad').map((k: { key: string; state: string }) => [k.key, k.state]));
    assert.deepEqual(states, { '…5555': 'disabled', '…6666': 'ok' });
    assert.ok(!health.text.includes('sk-bad-key'), 'the admin API shows fingerprints only');
    // /readyz is public: it counts the pooled keys by state and names none (issue 39, item 8).
    const readyText = await (await fetch(`${tg.gateway.origin}/readyz`)).text();
    const ready = JSON.parse(readyText) as { upstreams: { keys: Record<string, Record<string, number>> } };
    assert.deepEqual(ready.upstreams.keys.bad, { ok: 1, cooling: 0, disabled: 1 });
    assert.ok(!readyText.includes('…5555') && !readyText.includes('…6666'), 'no key fingerprint on /readyz');

    const alerts = tg.serverLog.filter((line) => line.includes('refused a pooled API key'));
    assert.equal(alerts.length, 1, 'logged once');
    const alert = JSON.parse(alerts[0]!) as { level: string; provider: string; key: string };
    assert.equal(alert.level, 'error');
    assert.deepEqual([alert.provider, alert.key], ['bad', '…5555']);
    assert.ok(!tg.serverLog.some((line) => line.includes(KEYS.badX)), 'no log line holds the key');

    sim.fault({ key: KEYS.badX }, null);
    const enabled = await admin.post(`/admin/api/upstream-health/keys/bad/${encodeURIComponent('…5555')}/enable`);
    assert.equal(enabled.status, 200, enabled.text);
    assert.equal(enabled.body.state, 'ok');
    for (let i = 0; i < 2; i++) assert.equal((await chat('bad/gpt-4o-mini')).status, 200);
    assert.equal(sentWith(KEYS.badX), 3, 'the enabled key takes requests again');
    assert.match(await metrics(), /tollgate_upstream_key_state\{provider="bad",key="…5555"\} 0/);
  });

  test('a 403 the request caused (a model the project may not use) disables no key: every user keeps being served', async () => {
    sim.fault({ model: 'gpt-4o-denied' }, 403);
    try {
      for (let i = 0; i < 4; i++) {
        const res = await chat('shared/gpt-4o-denied');
        assert.equal(res.status, 403, res.text);
        const error = JSON.parse(res.text).error;
        assert.equal(error.code, 'upstream_permission_error');
        assert.match(error.message, /refused this request \(403\)/);
        assert.doesNotMatch(error.message, /credential/, 'not worded as a bad gateway key');
      }
      const sentDenied = sim.requests.filter((r) => r.body?.model === 'gpt-4o-denied').length;
      assert.equal(sentDenied, 4, 'one attempt each: the request\'s refusal is not retried on another key');

      const health = await admin.get('/admin/api/upstream-health');
      const states = health.body.keys.filter((k: { provider: string }) => k.provider === 'shared').map((k: { state: string }) => k.state);
      assert.deepEqual(states, ['ok', 'ok']);
      assert.ok(!tg.serverLog.some((line) => line.includes('"provider":"shared"') && /pooled API key/.test(line)), 'nothing logged against a key');

      const other = await createGatewayUser(tg.gateway.store.db, { name: `pool-403-other-${process.pid}` });
      const otherKey = await createApiKey(tg.gateway.store.db, { gatewayUserId: other.id, name: 'other' });
      const res = await fetch(`${tg.gateway.origin}/api/v1/chat/completions`, {
        method: 'POST', headers: { authorization: `Bearer ${otherKey.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'shared/gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }),
      });
      assert.equal(res.status, 200, await res.text());
    } finally {
      sim.fault({ model: 'gpt-4o-denied' }, null);
    }
  });

  test('a user\'s own credential wins over the pool', async () => {
    const own = 'sk-users-own-key-4242';
    await setProviderCredential(tg.gateway.store.db, loadKeyring(tg.dataDir, {}), { gatewayUserId: tg.userId, provider: 'limited', apiKey: own });
    tg.gateway.store.notifyChange();
    const before = sentWith(KEYS.limited) + sentWith(KEYS.open);
    for (let i = 0; i < 3; i++) assert.equal((await chat('limited/gpt-4o-mini')).status, 200);
    assert.equal(sentWith(own), 3);
    assert.equal(sentWith(KEYS.limited) + sentWith(KEYS.open), before, 'no pooled key was used');
  });

  test('enabling a key the pool does not have answers 404 upstream_key_not_found', async () => {
    const res = await admin.post('/admin/api/upstream-health/keys/bad/nope/enable');
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, 'upstream_key_not_found');
  });
});
