/**
 * Key pools through the whole gateway (README "Routing and failover", provider `apiKeys`): requests
 * spread over a provider's keys, a key over its own rpm is skipped, a key answering 429 rests while
 * the attempt is retried on another key, a key answering 401 is disabled (logged once by its
 * fingerprint, shown on /metrics, /readyz and the admin API) until an admin enables it. Keys are
 * told apart by the Authorization header the simulator received.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { loginAdmin, type AdminClient } from '../helpers/admin-client.ts';
import { setProviderCredential } from '../../core/provider-credentials.ts';
import { loadKeyring } from '../../core/data-dir.ts';

const KEYS = {
  one: 'sk-pool-key-one-1111', two: 'sk-pool-key-two-2222',
  coolA: 'sk-cool-key-aaaa-3333', coolB: 'sk-cool-key-bbbb-4444',
  badX: 'sk-bad-key-xxxx-5555', badY: 'sk-bad-key-yyyy-6666',
  limited: 'sk-limited-one-7777', open: 'sk-limited-two-8888',
};

let sim: OpenAISimulator;
let tg: TestGateway;
let admin: AdminClient;

before(async () => {
  sim = await startOpenAISimulator();
  tg = await startTestGateway({
    providers: {
      pool: { type: 'openai', baseUrl: sim.baseUrl, apiKeys: [KEYS.one, KEYS.two] },
      cool: { type: 'openai', baseUrl: sim.baseUrl, apiKey: KEYS.coolA, apiKeys: [KEYS.coolB] },
      bad: { type: 'openai', baseUrl: sim.baseUrl, apiKeys: [KEYS.badX, { key: KEYS.badY }] },
      limited: { type: 'openai', baseUrl: sim.baseUrl, apiKeys: [{ key: KEYS.limited, rpm: 2 }, KEYS.open] },
    },
    router: { keyCooldownMs: 60_000 },
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
    const sentAtMs = Date.now();
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
    const readAtMs = Date.now();
    assert.equal(key.state, 'cooling');
    // The 429 came between the first request and the read: however long a busy machine took over
    // them, the key rests 30 s from then.
    const untilMs = Date.parse(key.cooling_until);
    assert.ok(untilMs >= sentAtMs + 30_000 && untilMs <= readAtMs + 30_000, `cooling for the retry-after asked (until ${key.cooling_until}, sent ${new Date(sentAtMs).toISOString()}, read ${new Date(readAtMs).toISOString()})`);
    assert.equal(key.last_error.status, 429);
    sim.fault({ key: KEYS.coolA }, null);
  });

  test('a key answering 401 is disabled, logged once, shown as disabled, and enabled again by an admin', async () => {
    sim.fault({ key: KEYS.badX }, 401);
    for (let i = 0; i < 4; i++) {
      const r = await chat('bad/gpt-4o-mini');
      assert.equal(r.status, 200, r.text);
    }
    assert.equal(sentWith(KEYS.badX), 1, 'a disabled key gets no more requests');
    assert.equal(sentWith(KEYS.badY), 4);

    assert.match(await metrics(), /tollgate_upstream_key_state\{provider="bad",key="…5555"\} 2/);
    const health = await admin.get('/admin/api/upstream-health');
    assert.equal(health.status, 200);
    const states = Object.fromEntries(health.body.keys.filter((k: { provider: string }) => k.provider === 'bad').map((k: { key: string; state: string }) => [k.key, k.state]));
    assert.deepEqual(states, { '…5555': 'disabled', '…6666': 'ok' });
    assert.ok(!health.text.includes('sk-bad-key'), 'the admin API shows fingerprints only');
    const ready = (await (await fetch(`${tg.gateway.origin}/readyz`)).json()) as { upstreams: { keys: Record<string, string> } };
    assert.equal(ready.upstreams.keys['bad/…5555'], 'disabled');

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
    assert.equal(sentWith(KEYS.badX), 2, 'the enabled key takes requests again');
    assert.match(await metrics(), /tollgate_upstream_key_state\{provider="bad",key="…5555"\} 0/);
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
