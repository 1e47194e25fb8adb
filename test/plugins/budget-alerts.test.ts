/**
 * Budget alerts (issue 15 item 3), through the whole gateway: requests to an OpenAI simulator push a
 * user's spend past 80 % and 100 % of the budget, and a real HTTP receiver on 127.0.0.1 gets exactly one
 * signed webhook per threshold and period: sequential and concurrent requests, a receiver that fails
 * twice, a gateway restarted with a delivery pending, a new period, per-user thresholds, and the admin
 * API that lists them.
 *
 * Prices make each request cost exactly $0.024: input free, output $1,000 per million tokens, and the
 * simulator reports 24 completion tokens; `max_tokens: 24` makes the reservation that same amount.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { startTestGateway, manualClock, type TestGateway, type ManualClock } from '../helpers/test-gateway.ts';
import { dataDirWithPrices } from '../helpers/prices.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startWebhookReceiver, type ReceivedHook, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { loginAdmin } from '../helpers/admin-client.ts';
import { eventually } from '../helpers/eventually.ts';
import { sleep } from '../helpers/sim-http.ts';
import type { UserFields } from '../../core/accounts/gateway-users.ts';
import { crossedThresholds } from '../../plugins/budget/alerts.ts';
import { ManifestError, validateManifest } from '../../core/manifest.ts';
import { pluginRegistry } from '../../plugins/index.ts';
import { createWriteTarget } from '../../core/request-log/write-target.ts';
import type { PendingWrite } from '../../core/request-log/write-behind.ts';
import { retryDelayMs } from '../../plugins/budget/alert-delivery.ts';

const SECRET = 'test-webhook-secret-0123456789';
const PRICES = [{ model: 'gpt-4o-mini', provider: 'openai', input: 0, output: 1000, cachedInput: 0 }];
const REQUEST_NANOS = 24_000_000;
/** Long enough for a duplicate alert to have been sent, had one fired. */
const QUIET_MS = 300;

let openai: OpenAISimulator;
before(async () => {
  openai = await startOpenAISimulator();
});
after(() => openai.close());

interface Setup {
  budgetUsd: number;
  receiver: WebhookReceiver;
  dataDir?: string;
  clock?: ManualClock;
  user?: Omit<UserFields, 'name'>;
  alerts?: Record<string, unknown>;
}

async function gateway(setup: Setup): Promise<TestGateway> {
  return startTestGateway({
    dataDir: setup.dataDir ?? (await dataDirWithPrices(PRICES)),
    providers: { openai: { type: 'openai', baseUrl: openai.baseUrl, apiKey: 'sk-o' } },
    config: {
      budget: {
        alerts: { webhookUrl: setup.receiver.url, secret: SECRET, backoffMs: 20, maxBackoffMs: 50, pollIntervalMs: 20, timeoutMs: 30_000, ...setup.alerts },
      },
    },
    user: { budgetUsd: setup.budgetUsd, ...setup.user },
    ...(setup.clock ? { clock: setup.clock } : {}),
  });
}

async function spend(tg: TestGateway, count = 1): Promise<void> {
  for (let i = 0; i < count; i++) {
    const { status, text } = await tg.post('/chat/completions', { model: 'openai/gpt-4o-mini', max_tokens: 24, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(status, 200, text);
  }
}

/** The verified body of a hook: the signature must match HMAC-SHA256(secret, "<timestamp>.<raw body>"). */
function verified(hook: ReceivedHook, secret = SECRET): Record<string, any> {
  const timestamp = String(hook.headers['x-tollgate-timestamp']);
  const expected = `sha256=${createHmac('sha256', secret).update(`${timestamp}.${hook.raw}`).digest('hex')}`;
  const got = String(hook.headers['x-tollgate-signature']);
  assert.ok(got.length === expected.length && timingSafeEqual(Buffer.from(got), Buffer.from(expected)), `bad signature ${got}`);
  assert.ok(Math.abs(Date.now() / 1000 - Number(timestamp)) < 60, 'the timestamp is now');
  return JSON.parse(hook.raw) as Record<string, any>;
}

function monthStart(nowMs: number): string {
  const now = new Date(nowMs);
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString();
}

describe('budget alerts', () => {
  test('a threshold is crossed when the spend goes from below it to at or above it', () => {
    assert.deepEqual(crossedThresholds(0, 79, 100, [80, 100]), []);
    assert.deepEqual(crossedThresholds(79, 80, 100, [100, 80]), [80]);
    assert.deepEqual(crossedThresholds(80, 99, 100, [80, 100]), [], 'already past 80: no second alert');
    assert.deepEqual(crossedThresholds(10, 150, 100, [80, 100]), [80, 100], 'one answer can cross two');
    assert.deepEqual(crossedThresholds(0, 10 ** 12, null, [80, 100]), [], 'unlimited users have no alerts');
  });

  test('retries back off exponentially with jitter, up to the maximum', () => {
    assert.equal(retryDelayMs(1, 1000, 60_000, () => 0.5), 1000);
    assert.equal(retryDelayMs(3, 1000, 60_000, () => 0.5), 4000);
    assert.equal(retryDelayMs(3, 1000, 60_000, () => 0), 2000);
    assert.equal(retryDelayMs(3, 1000, 60_000, () => 0.999), 5996);
    assert.equal(retryDelayMs(20, 1000, 60_000, () => 0.5), 60_000);
  });

  test('the manifest defaults alerts to 80 % and 100 % and requires a secret with a webhook', () => {
    const budgetConfig = (alerts?: Record<string, unknown>) => {
      const manifest = validateManifest({ plugins: [{ name: 'budget', config: alerts ? { alerts } : {} }, { name: 'provider-router', config: { providers: {} } }] }, pluginRegistry, { env: { SECRET: SECRET } });
      return manifest.plugins[0]!.config as { alerts: Record<string, unknown> };
    };
    assert.deepEqual(budgetConfig().alerts.thresholds, [80, 100]);
    assert.equal(budgetConfig({ webhookUrl: 'https://h.example/x', secret: '${SECRET}' }).alerts.secret, SECRET, 'the secret may come from the environment');
    assert.throws(() => budgetConfig({ webhookUrl: 'https://h.example/x' }), (err: unknown) => {
      assert.ok(err instanceof ManifestError);
      assert.equal(err.issues.length, 1);
      assert.match(err.issues[0]!.pointer, /alerts/);
      assert.match(err.issues[0]!.message, /secret/);
      return true;
    });
  });

  test('the same alert written twice (two batches, two processes) is stored once', async () => {
    const receiver = await startWebhookReceiver();
    const tg = await gateway({ budgetUsd: 1, receiver });
    try {
      const alert: PendingWrite = {
        kind: 'alert', group: 'r1', userId: tg.userId, periodStartIso: '2026-11-01T00:00:00.000Z', thresholdPercent: 80,
        firedAtIso: '2026-11-20T00:00:00.000Z', payload: '{}', deliver: false,
      };
      const target = createWriteTarget(tg.gateway.store);
      await target.writeBatch([alert, { ...alert, group: 'r2' }]);
      await target.writeOne({ ...alert, group: 'r3', firedAtIso: '2026-11-21T00:00:00.000Z' });
      const rows = await tg.gateway.store.db.selectFrom('budget_alerts').select(['fired_at', 'state']).where('gateway_user_id', '=', tg.userId).execute();
      assert.deepEqual(rows, [{ fired_at: '2026-11-20T00:00:00.000Z', state: 'unsent' }]);
    } finally {
      await tg.close();
      await receiver.close();
    }
  });

  test('crossing 80 % then 100 % sends one signed alert each, and the admin API lists them as delivered', async () => {
    const receiver = await startWebhookReceiver();
    const tg = await gateway({ budgetUsd: 0.24, receiver });
    try {
      await spend(tg, 7); // 70 %
      await sleep(QUIET_MS);
      assert.equal(receiver.received.length, 0, 'nothing below 80 %');
      await spend(tg); // 80 % exactly
      const [first] = await receiver.waitFor(1);
      const alert80 = verified(first!);
      assert.equal(first!.headers['content-type'], 'application/json');
      assert.deepEqual(alert80, {
        type: 'budget.threshold',
        user: { id: tg.userId, name: alert80.user.name },
        // The period of the instant it fired (not of the test's now, which may be past a month's end).
        period: { start: monthStart(Date.parse(alert80.fired_at)), end: alert80.period.end },
        spent_nanos: 8 * REQUEST_NANOS,
        spent_usd: 0.192,
        limit_nanos: 240_000_000,
        limit_usd: 0.24,
        threshold_percent: 80,
        fired_at: alert80.fired_at,
      });
      assert.match(alert80.user.name, /^test-user-/);
      assert.ok(Date.parse(alert80.period.end) > Date.parse(alert80.fired_at));

      await spend(tg, 2); // 90 %, then 100 %
      await receiver.waitFor(2);
      const alert100 = verified(receiver.received[1]!);
      assert.equal(alert100.threshold_percent, 100);
      assert.equal(alert100.spent_nanos, 10 * REQUEST_NANOS);
      assert.notEqual(receiver.received[0]!.headers['x-tollgate-alert-id'], receiver.received[1]!.headers['x-tollgate-alert-id']);

      assert.equal((await tg.post('/chat/completions', { model: 'openai/gpt-4o-mini', max_tokens: 24, messages: [{ role: 'user', content: 'hi' }] })).status, 402);
      await sleep(QUIET_MS);
      assert.equal(receiver.received.length, 2, 'exactly one alert per threshold');

      const admin = await loginAdmin(tg.gateway.origin);
      // A delivery is recorded once the receiver has answered: a moment after it got the hook.
      let listed = await admin.get('/admin/api/alerts');
      await eventually(async () => {
        listed = await admin.get('/admin/api/alerts');
        assert.equal(listed.status, 200);
        assert.deepEqual(listed.body.data.map((a: any) => [a.user_id, a.threshold_percent, a.state, a.attempts, a.spent_usd, a.limit_usd]), [
          [tg.userId, 100, 'delivered', 1, 0.24, 0.24],
          [tg.userId, 80, 'delivered', 1, 0.192, 0.24],
        ]);
      });
      assert.equal(listed.body.data[0].period_start, alert80.period.start);
      assert.ok(listed.body.data[0].delivered_at);
      assert.equal((await admin.get('/admin/api/alerts?state=pending')).body.data.length, 0);
      assert.equal((await admin.get('/admin/api/alerts?state=sent')).status, 400);
    } finally {
      await tg.close();
      await receiver.close();
    }
  });

  test('20 concurrent requests crossing both thresholds together send exactly one alert per threshold', async () => {
    const receiver = await startWebhookReceiver();
    const tg = await gateway({ budgetUsd: 0.48, receiver });
    try {
      const results = await Promise.all(Array.from({ length: 20 }, () => tg.post('/chat/completions', {
        model: 'openai/gpt-4o-mini', max_tokens: 24, messages: [{ role: 'user', content: 'hi' }],
      })));
      assert.deepEqual(results.map((r) => r.status), Array(20).fill(200));
      await receiver.waitFor(2);
      await sleep(QUIET_MS);
      const alerts = receiver.received.map((hook) => verified(hook));
      assert.deepEqual(alerts.map((a) => a.threshold_percent).sort((a, b) => a - b), [80, 100]);
      const at80 = alerts.find((a) => a.threshold_percent === 80)!;
      assert.ok(at80.spent_nanos >= 0.8 * 480_000_000 && at80.spent_nanos < 0.8 * 480_000_000 + REQUEST_NANOS, String(at80.spent_nanos));
      await eventually(async () => {
        const rows = await tg.gateway.store.db.selectFrom('budget_alerts').select(['threshold_percent', 'state'])
          .where('gateway_user_id', '=', tg.userId).orderBy('threshold_percent').execute();
        assert.deepEqual(rows, [{ threshold_percent: 80, state: 'delivered' }, { threshold_percent: 100, state: 'delivered' }]);
      });
    } finally {
      await tg.close();
      await receiver.close();
    }
  });

  test('a receiver that answers 500 twice gets the alert on the third attempt', async () => {
    const receiver = await startWebhookReceiver({ statuses: [500, 500] });
    const tg = await gateway({ budgetUsd: 0.03, receiver });
    try {
      await spend(tg); // 80 %
      await receiver.waitFor(3);
      await sleep(QUIET_MS);
      assert.equal(receiver.received.length, 3);
      const bodies = new Set(receiver.received.map((hook) => hook.raw));
      assert.equal(bodies.size, 1, 'every attempt sends the same body');
      assert.equal(new Set(receiver.received.map((hook) => hook.headers['x-tollgate-alert-id'])).size, 1);
      for (const hook of receiver.received) assert.equal(verified(hook).threshold_percent, 80);
      const admin = await loginAdmin(tg.gateway.origin);
      await eventually(async () => {
        const [alert] = (await admin.get(`/admin/api/alerts?user_id=${tg.userId}`)).body.data;
        assert.deepEqual([alert.state, alert.attempts, alert.last_error], ['delivered', 3, null]);
      });
    } finally {
      await tg.close();
      await receiver.close();
    }
  });

  test('an alert that cannot be delivered is marked failed after maxAttempts', async () => {
    const receiver = await startWebhookReceiver({ statuses: [503, 503, 503, 503] });
    const tg = await gateway({ budgetUsd: 0.03, receiver, alerts: { maxAttempts: 2 } });
    try {
      await spend(tg);
      await receiver.waitFor(2);
      await sleep(QUIET_MS);
      assert.equal(receiver.received.length, 2);
      const admin = await loginAdmin(tg.gateway.origin);
      await eventually(async () => {
        const [alert] = (await admin.get(`/admin/api/alerts?user_id=${tg.userId}`)).body.data;
        assert.deepEqual([alert.state, alert.attempts], ['failed', 2]);
        assert.match(alert.last_error, /^HTTP 503/);
      });
    } finally {
      await tg.close();
      await receiver.close();
    }
  });

  test('a delivery pending when the gateway stops is sent once after a restart on the same data dir', async () => {
    const down = await startWebhookReceiver();
    const { port, url } = down;
    await down.close(); // nothing listens there now: every attempt is refused
    const dataDir = await dataDirWithPrices(PRICES);
    // Retries 1 s apart, up to 100: the delivery is still pending when this gateway stops, however
    // slowly a busy machine gets there (at 20-50 ms apart, 10 attempts were spent in half a second).
    const first = await gateway({ budgetUsd: 0.03, receiver: down, dataDir, alerts: { backoffMs: 1_000, maxBackoffMs: 1_000, maxAttempts: 100 } });
    const userId = first.userId;
    try {
      await spend(first);
      await eventually(async () => {
        const row = await first.gateway.store.db.selectFrom('budget_alerts').select(['state', 'attempts', 'last_error']).where('gateway_user_id', '=', userId).executeTakeFirst();
        assert.ok(row && row.attempts >= 1, 'an attempt was made');
        assert.equal(row.state, 'pending');
        assert.match(row.last_error ?? '', /ECONNREFUSED/);
      }, { intervalMs: 10 });
    } finally {
      await first.close();
    }

    const receiver = await startWebhookReceiver({ port });
    assert.equal(receiver.url, url);
    const second = await gateway({ budgetUsd: 0.03, receiver, dataDir });
    try {
      await receiver.waitFor(1);
      await sleep(QUIET_MS);
      assert.equal(receiver.received.length, 1);
      const alert = verified(receiver.received[0]!);
      assert.equal(alert.user.id, userId);
      assert.equal(alert.threshold_percent, 80);
      await eventually(async () => {
        const row = await second.gateway.store.db.selectFrom('budget_alerts').select('state').where('gateway_user_id', '=', userId).executeTakeFirstOrThrow();
        assert.equal(row.state, 'delivered');
      });
    } finally {
      await second.close();
      await receiver.close();
    }
  });

  test('the same threshold fires again in the next budget period', async () => {
    const receiver = await startWebhookReceiver();
    const clock = manualClock(Date.parse('2026-03-10T12:00:00.000Z'));
    const tg = await gateway({ budgetUsd: 0.03, receiver, clock, user: { budgetPeriod: 'daily' } });
    try {
      await spend(tg);
      await receiver.waitFor(1);
      clock.advance(86_400_000);
      await spend(tg);
      await receiver.waitFor(2);
      await sleep(QUIET_MS);
      const alerts = receiver.received.map((hook) => JSON.parse(hook.raw));
      assert.deepEqual(alerts.map((a) => [a.threshold_percent, a.period.start, a.period.end, a.spent_nanos]), [
        [80, '2026-03-10T00:00:00.000Z', '2026-03-11T00:00:00.000Z', REQUEST_NANOS],
        [80, '2026-03-11T00:00:00.000Z', '2026-03-12T00:00:00.000Z', REQUEST_NANOS],
      ]);
    } finally {
      await tg.close();
      await receiver.close();
    }
  });

  test('a user\'s own thresholds replace the manifest\'s, and are set through the admin API', async () => {
    const receiver = await startWebhookReceiver();
    const tg = await gateway({ budgetUsd: 0.096, receiver, user: { alertThresholds: [50] } });
    try {
      const admin = await loginAdmin(tg.gateway.origin);
      assert.deepEqual((await admin.get(`/admin/api/users/${tg.userId}`)).body.budget_alert_thresholds, [50]);
      const bad = await admin.patch(`/admin/api/users/${tg.userId}`, { budget_alert_thresholds: [0, 50] });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.error.param, 'budget_alert_thresholds');

      await spend(tg, 2); // 50 %: the user's own threshold (80 is not one of theirs)
      await receiver.waitFor(1);
      assert.equal(verified(receiver.received[0]!).threshold_percent, 50);
      const patched = await admin.patch(`/admin/api/users/${tg.userId}`, { budget_alert_thresholds: [75, 100, 75] });
      assert.equal(patched.status, 200);
      assert.deepEqual(patched.body.budget_alert_thresholds, [75, 100]);
      await spend(tg); // 75 %
      await receiver.waitFor(2);
      assert.equal(verified(receiver.received[1]!).threshold_percent, 75);
      assert.deepEqual((await admin.patch(`/admin/api/users/${tg.userId}`, { budget_alert_thresholds: null })).body.budget_alert_thresholds, null);
      await spend(tg); // 75 % → 100 %, with the manifest's [80, 100] again: both crossed at once
      await receiver.waitFor(4);
      await sleep(QUIET_MS);
      const percents = receiver.received.map((hook) => verified(hook).threshold_percent);
      assert.deepEqual([...percents.slice(0, 2), ...percents.slice(2).sort((a, b) => a - b)], [50, 75, 80, 100]);
    } finally {
      await tg.close();
      await receiver.close();
    }
  });
});
