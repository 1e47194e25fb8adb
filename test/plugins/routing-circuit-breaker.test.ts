/**
 * Circuit breakers through the whole gateway (docs/routing.md, router
 * `circuitBreaker`): a deployment failing `failureThreshold` times within the window is skipped for
 * the cooldown (it receives nothing while another deployment serves), then half-open lets exactly
 * one probe through: a failed probe opens it again, a successful one closes it. A request whose
 * every deployment is open still tries the one whose cooldown ends first. The state shows on
 * /metrics, /readyz and the admin API. What one user causes (errors of the request, failures of
 * the user's own credential) never opens it for everyone. The gateway clock is moved by hand past
 * the cooldowns.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { manualClock, startTestGateway, type ManualClock, type TestGateway } from '../helpers/test-gateway.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { loginAdmin, type AdminClient } from '../helpers/admin-client.ts';
import { deleteProviderCredential, setProviderCredential } from '../../core/accounts/provider-credentials.ts';
import { loadKeyring } from '../../core/store/data-dir.ts';
import { createGatewayUser } from '../../core/accounts/gateway-users.ts';
import { createApiKey } from '../../core/accounts/api-keys.ts';
import { eventually } from '../helpers/eventually.ts';

const COOLDOWN_MS = 30_000;

let simA: OpenAISimulator;
let simB: OpenAISimulator;
let clock: ManualClock;
let tg: TestGateway;
let admin: AdminClient;

before(async () => {
  simA = await startOpenAISimulator();
  simB = await startOpenAISimulator();
  clock = manualClock(Date.parse('2026-03-02T10:00:00Z'));
  tg = await startTestGateway({
    clock,
    providers: {
      a: { type: 'openai', baseUrl: simA.baseUrl, apiKey: 'sk-a' },
      b: { type: 'openai', baseUrl: simB.baseUrl, apiKey: 'sk-b' },
    },
    router: {
      models: {
        guarded: { strategy: 'fallback', deployments: [{ provider: 'a', model: 'gpt-4o-mini' }, { provider: 'b', model: 'gpt-4o-mini' }] },
        lonely: { deployments: [{ provider: 'a', model: 'sim-lonely' }] },
        shared: { strategy: 'fallback', deployments: [{ provider: 'a', model: 'gpt-4o' }, { provider: 'b', model: 'gpt-4o' }] },
      },
      circuitBreaker: { failureThreshold: 3, windowMs: 10_000, cooldownMs: COOLDOWN_MS },
    },
  });
  admin = await loginAdmin(tg.gateway.origin);
});

after(async () => {
  await tg.close();
  await Promise.all([simA.close(), simB.close()]);
});

const chat = (model: string) => tg.post('/chat/completions', { model, messages: [{ role: 'user', content: 'Hi' }] });

/** Chat requests simulator A received for `model`. */
const sentToA = (model: string) => simA.requests.filter((r) => r.path === '/v1/chat/completions' && r.body?.model === model).length;

async function breakerGauge(model: string): Promise<number> {
  const text = await (await fetch(`${tg.gateway.origin}/metrics`)).text();
  const line = new RegExp(`^tollgate_upstream_circuit_state\\{provider="a",model="${model}"\\} (\\d)$`, 'm').exec(text);
  assert.ok(line, `no breaker gauge for a/${model}`);
  return Number(line[1]);
}

async function readyState(deployment: string): Promise<string> {
  const res = await fetch(`${tg.gateway.origin}/readyz`);
  assert.equal(res.status, 200, 'open breakers do not make the gateway unready');
  const body = (await res.json()) as { status: string; upstreams: { deployments: Record<string, string> } };
  assert.equal(body.status, 'ready');
  return body.upstreams.deployments[deployment]!;
}

describe('circuit breaker', () => {
  test('opens after failureThreshold failures; the failing deployment then receives nothing during the cooldown', async () => {
    assert.equal(await readyState('a/gpt-4o-mini'), 'closed', 'a group deployment is tracked from the start');
    simA.fault({ model: 'gpt-4o-mini' }, 500);
    for (let i = 0; i < 3; i++) assert.equal((await chat('guarded')).status, 200, 'b serves after a fails');
    assert.equal(sentToA('gpt-4o-mini'), 3);
    assert.equal(await breakerGauge('gpt-4o-mini'), 1, 'open');

    const servedByB = simB.requests.length;
    for (let i = 0; i < 5; i++) {
      const res = await chat('guarded');
      assert.equal(res.status, 200);
      const row = await tg.logRow(res.requestId);
      assert.deepEqual(JSON.parse(row.attempts ?? '[]').map((a: { provider: string }) => a.provider), ['b'], 'one attempt, on b');
    }
    assert.equal(sentToA('gpt-4o-mini'), 3, 'no request reached a while open');
    assert.equal(simB.requests.length, servedByB + 5);

    assert.equal(await readyState('a/gpt-4o-mini'), 'open');
    const health = await admin.get('/admin/api/upstream-health');
    const a = health.body.deployments.find((d: { deployment: string }) => d.deployment === 'a/gpt-4o-mini');
    assert.equal(a.state, 'open');
    assert.equal(Date.parse(a.open_until), clock() + COOLDOWN_MS);
    assert.equal(a.recent.attempts, 3);
    assert.equal(a.recent.error_rate, 1);
    assert.equal(a.last_error.status, 500);
    const b = health.body.deployments.find((d: { deployment: string }) => d.deployment === 'b/gpt-4o-mini');
    assert.deepEqual([b.state, b.recent.error_rate, b.last_error], ['closed', 0, null]);
    const text = await (await fetch(`${tg.gateway.origin}/metrics`)).text();
    assert.match(text, /tollgate_upstream_deployment_failures_total\{provider="a",model="gpt-4o-mini"\} 3/);
    assert.match(text, /tollgate_upstream_circuit_opened_total\{provider="a",model="gpt-4o-mini"\} 1/);
  });

  test('half-open after the cooldown: exactly one probe goes through, and its failure opens the breaker again', async () => {
    clock.advance(COOLDOWN_MS + 1);
    assert.equal(await breakerGauge('gpt-4o-mini'), 2, 'half-open');
    assert.equal(await readyState('a/gpt-4o-mini'), 'half-open');
    const before = sentToA('gpt-4o-mini');
    simA.fault({ model: 'gpt-4o-mini' }, 500, {}, 300);
    const results = await Promise.all(Array.from({ length: 5 }, () => chat('guarded')));
    for (const r of results) assert.equal(r.status, 200, r.text);
    assert.equal(sentToA('gpt-4o-mini'), before + 1, 'exactly one probe');
    assert.equal(await breakerGauge('gpt-4o-mini'), 1, 'open again');
    assert.equal((await chat('guarded')).status, 200);
    assert.equal(sentToA('gpt-4o-mini'), before + 1, 'skipped again during the new cooldown');
  });

  test('a successful probe closes the breaker; requests reach the deployment again', async () => {
    clock.advance(COOLDOWN_MS + 1);
    const before = sentToA('gpt-4o-mini');
    // The probe answers normally but slowly, so the other requests arrive while it is out.
    simA.fault({ model: 'gpt-4o-mini' }, 200, {}, 300);
    const results = await Promise.all(Array.from({ length: 5 }, () => chat('guarded')));
    for (const r of results) assert.equal(r.status, 200, r.text);
    assert.equal(sentToA('gpt-4o-mini'), before + 1, 'exactly one probe while it was out');
    assert.equal(await breakerGauge('gpt-4o-mini'), 0, 'closed');
    simA.fault({ model: 'gpt-4o-mini' }, null);
    for (let i = 0; i < 2; i++) assert.equal((await chat('guarded')).status, 200);
    assert.equal(sentToA('gpt-4o-mini'), before + 3, 'a serves again, first in the fallback order');
    assert.equal(await readyState('a/gpt-4o-mini'), 'closed');
  });

  test('when every deployment is open the one whose cooldown ends first is still tried', async () => {
    simA.fault({ model: 'sim-lonely' }, 500);
    for (let i = 0; i < 3; i++) assert.equal((await chat('lonely')).status, 502);
    assert.equal(await breakerGauge('sim-lonely'), 1, 'open');
    assert.equal(sentToA('sim-lonely'), 3);
    simA.fault({ model: 'sim-lonely' }, null);
    const res = await chat('lonely');
    assert.equal(res.status, 200, 'tried anyway, and it recovered');
    assert.equal(sentToA('sim-lonely'), 4);
    assert.equal(await breakerGauge('sim-lonely'), 0, 'the forced try closed it');
  });

  test('an error the request caused (404) does not count against the deployment, whose made-up name stays off /metrics and /readyz', async () => {
    for (let i = 0; i < 4; i++) assert.equal((await chat('a/sim-404')).status, 404);
    const health = await admin.get('/admin/api/upstream-health');
    const entry = health.body.deployments.find((d: { deployment: string }) => d.deployment === 'a/sim-404');
    assert.deepEqual([entry.state, entry.recent.attempts, entry.recent.error_rate], ['closed', 4, 0]);
    assert.doesNotMatch(await (await fetch(`${tg.gateway.origin}/metrics`)).text(), /model="sim-404"/, 'a model that never served is no label value');
    assert.equal(await readyState('a/sim-404'), undefined);
  });

  test('clients that hang up while the deployment is still answering do not count against it', async () => {
    simA.fault({ model: 'sim-lonely' }, 200, {}, 1_000);
    try {
      for (let i = 0; i < 4; i++) {
        const before = sentToA('sim-lonely');
        const abort = new AbortController();
        const res = fetch(`${tg.gateway.origin}/api/v1/chat/completions`, {
          method: 'POST', signal: abort.signal,
          headers: { authorization: `Bearer ${tg.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'lonely', messages: [{ role: 'user', content: 'Hi' }] }),
        }).catch(() => null);
        while (sentToA('sim-lonely') === before) await new Promise((r) => setTimeout(r, 10));
        abort.abort();
        await res;
      }
      // The gateway notices each hang-up, ends its attempt, then logs it (499): once the four rows are
      // in, every attempt has been recorded, however late a busy machine got to it.
      await eventually(async () => assert.equal((await tg.logRowsOf('lonely', 0)).filter((r) => r.status === 499).length, 4));
      assert.equal(await breakerGauge('sim-lonely'), 0, 'closed: four hang-ups are not four failures');
      assert.equal(await readyState('a/sim-lonely'), 'closed');
    } finally {
      simA.fault({ model: 'sim-lonely' }, null);
    }
  });

  test('one user\'s failing own credential does not open the deployment\'s breaker for everyone', async () => {
    const own = 'sk-users-own-failing-key';
    await setProviderCredential(tg.gateway.store.db, loadKeyring(tg.dataDir, {}), { gatewayUserId: tg.userId, provider: 'a', apiKey: own });
    tg.gateway.store.notifyChange();
    simA.fault({ key: own }, 500);
    try {
      for (let i = 0; i < 4; i++) assert.equal((await chat('shared')).status, 200, 'b serves this user after a fails with its own key');
      assert.equal(simA.requests.filter((r) => r.body?.model === 'gpt-4o' && r.headers.authorization === `Bearer ${own}`).length, 4);
      assert.equal(await readyState('a/gpt-4o'), 'closed');

      const other = await createGatewayUser(tg.gateway.store.db, { name: `breaker-other-${process.pid}` });
      const otherKey = await createApiKey(tg.gateway.store.db, { gatewayUserId: other.id, name: 'other' });
      const res = await fetch(`${tg.gateway.origin}/api/v1/chat/completions`, {
        method: 'POST', headers: { authorization: `Bearer ${otherKey.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'shared', messages: [{ role: 'user', content: 'Hi' }] }),
      });
      assert.equal(res.status, 200);
      const row = await tg.logRow(res.headers.get('x-request-id')!);
      assert.deepEqual(JSON.parse(row.attempts ?? '[]').map((a: { provider: string }) => a.provider), ['a'], 'everyone else still goes to a first');
    } finally {
      simA.fault({ key: own }, null);
      await deleteProviderCredential(tg.gateway.store.db, tg.userId, 'a');
      tg.gateway.store.notifyChange();
    }
  });
});
