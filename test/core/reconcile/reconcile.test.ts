/**
 * Reconciliation against local servers that speak OpenAI's organization Usage/Costs APIs and
 * Anthropic's Usage and Cost Report Admin API (paging included): a ledger written through the real
 * store (and one produced by real requests through a gateway) that matches is not flagged; injected
 * differences (a key used outside, a wrong price, a missing day) are flagged with their cause; a
 * flagged run's webhook carries the budget alerts' signature; the CLI prints the report; the admin API
 * lists the runs; the daily job runs once a day.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { createKeyring } from '../../../core/accounts/secret-box.ts';
import { setUsageReportCredential, listUsageReportCredentials } from '../../../core/accounts/usage-report-credentials.ts';
import { costOf } from '../../../core/money/cost.ts';
import type { ModelPrice } from '../../../core/money/price-table.ts';
import { setPrice } from '../../../core/money/price-table.ts';
import { decimalToNanos } from '../../../core/reconcile/decimal-nanos.ts';
import { runReconciliation, type ReconcileSettings } from '../../../core/reconcile/reconcile-run.ts';
import { createReconcileJob, dailyRange } from '../../../core/reconcile/reconcile-job.ts';
import { listRuns } from '../../../core/reconcile/reconciliation-runs.ts';
import { loadKeyring } from '../../../core/store/data-dir.ts';
import type { Store } from '../../../core/store/store.ts';
import { createLog } from '../../../core/runtime/log.ts';
import { startUsageReportSimulator, type UsageReportSimulator } from '../../helpers/usage-report-simulator.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../helpers/webhook-receiver.ts';
import { writeLogRows } from '../../helpers/log-rows.ts';
import { openTestStore } from '../../helpers/test-store.ts';
import { tempDir } from '../../helpers/tmp.ts';
import { runCli } from '../../helpers/cli.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../../helpers/openai-simulator.ts';
import { startTestGateway, type TestGateway } from '../../helpers/test-gateway.ts';
import { loginAdmin } from '../../helpers/admin-client.ts';
import { keyFingerprint } from '../../../plugins/provider-router/routing/key-pool.ts';

const OPENAI_ADMIN_KEY = 'sk-admin-test-0123456789abcdef';
const ANTHROPIC_ADMIN_KEY = 'sk-ant-admin01-test-0123456789abcdef';
const SECRET = 'reconciliation-secret-0123456789';
const GPT = 'gpt-4o-mini-2024-07-18';
const CLAUDE = 'claude-sonnet-4-5-20250929';
const GPT_PRICE: ModelPrice = { model: GPT, provider: 'openai', input_price_per_million: 0.15, output_price_per_million: 0.6, cached_input_price_per_million: 0.075, cache_write_price_per_million: null, source: 'manual' };
const CLAUDE_PRICE: ModelPrice = { model: CLAUDE, provider: 'anthropic', input_price_per_million: 3, output_price_per_million: 15, cached_input_price_per_million: 0.3, cache_write_price_per_million: 3.75, source: 'manual' };
const log = createLog('error', () => {});

function settings(webhookUrl?: string): ReconcileSettings {
  return { tolerancePercent: 1, toleranceUsd: 0.5, timeoutMs: 10_000, ...(webhookUrl ? { webhookUrl, secret: SECRET } : {}) };
}

/** One ledger row as the gateway logs it: canonical tokens (prompt includes cached and cache writes), cost at `price`. */
function ledgerRow(provider: string, model: string, day: string, tokens: { prompt: number; cached?: number; write?: number; output: number }, price: ModelPrice, status = 200) {
  const cost = costOf(price, { promptTokens: tokens.prompt, cachedTokens: tokens.cached ?? 0, cacheWriteTokens: tokens.write ?? 0, completionTokens: tokens.output });
  return {
    provider, model_requested: model, model_served: model, status, created_at: `${day}T12:00:00.000Z`,
    prompt_tokens: tokens.prompt, cached_tokens: tokens.cached ?? 0, cache_write_tokens: tokens.write ?? 0, completion_tokens: tokens.output,
    cost_nanos: status < 400 ? cost.totalNanos : null,
    attempts: JSON.stringify([{ provider, model, status, errorCode: null, latencyMs: 5 }]),
  };
}

/** OpenAI's completions usage result for `requests` calls of (2M input incl. 0.5M cached, 1M output) on `apiKeyId`. */
function openaiUsage(requests: number, apiKeyId = 'key_tollgate', model = GPT) {
  return {
    object: 'organization.usage.completions.result', input_tokens: 2_000_000 * requests, input_cached_tokens: 500_000 * requests,
    output_tokens: 1_000_000 * requests, num_model_requests: requests, project_id: 'proj_main', user_id: null, api_key_id: apiKeyId, model, batch: false,
  };
}

/** OpenAI's cost results for that usage at `outputPrice` USD per million output tokens (amounts are JSON numbers). */
function openaiCosts(requests: number, outputPrice = 0.6, model = GPT) {
  const line = (item: string, value: number) => ({ object: 'organization.costs.result', amount: { value, currency: 'usd' }, line_item: `${model}, ${item}`, project_id: 'proj_main' });
  return [line('input', Number((1.5 * requests * 0.15).toFixed(6))), line('cached input', Number((0.5 * requests * 0.075).toFixed(6))), line('output', Number((requests * outputPrice).toFixed(6)))];
}

describe('decimal amounts', () => {
  it('converts provider decimals to nano-USD exactly, rounding half away from zero at the nano', () => {
    assert.equal(decimalToNanos('123.78912', 7), 1_237_891_200); // Anthropic cents
    assert.equal(decimalToNanos(0.06, 9), 60_000_000);
    assert.equal(decimalToNanos(0.1 + 0.2, 9), 300_000_000); // the float's shortest text, rounded at the nano
    assert.equal(decimalToNanos('1e-9', 9), 1);
    assert.equal(decimalToNanos('0.0000000005', 9), 1);
    assert.equal(decimalToNanos('0.0000000004', 9), 0);
    assert.equal(decimalToNanos('-1.5', 9), -1_500_000_000);
    assert.equal(decimalToNanos('2.5E2', 7), 2_500_000_000);
    assert.throws(() => decimalToNanos('12,5', 9), RangeError);
    assert.throws(() => decimalToNanos('', 9), RangeError);
  });
});

describe('reconciliation with OpenAI and Anthropic reports', () => {
  let sim: UsageReportSimulator;
  let receiver: WebhookReceiver;
  let store: Store;
  let dataDir: string;
  const keyring = createKeyring(randomBytes(32));

  before(async () => {
    sim = await startUsageReportSimulator({ openaiKey: OPENAI_ADMIN_KEY, anthropicKey: ANTHROPIC_ADMIN_KEY, bucketsPerPage: 1 });
    receiver = await startWebhookReceiver();
    dataDir = tempDir();
    store = await openTestStore(dataDir);
    await setPrice(store.db, { model: 'gpt-4o-mini', provider: 'openai', input_price_per_million: 0.15, output_price_per_million: 0.6, cached_input_price_per_million: 0.075 });
    await setPrice(store.db, { model: CLAUDE, provider: 'anthropic', input_price_per_million: 3, output_price_per_million: 15, cached_input_price_per_million: 0.3, cache_write_price_per_million: 3.75 });
  });
  after(async () => {
    await store.close();
    await sim.close();
    await receiver.close();
  });

  it('flags nothing when the OpenAI report matches the ledger (within the tolerance), reading every page', async () => {
    await setUsageReportCredential(store.db, keyring, { provider: 'openai', kind: 'openai', adminKey: OPENAI_ADMIN_KEY, baseUrl: `${sim.origin}/v1`, gatewayKeyIds: ['key_tollgate'] });
    const big = { prompt: 2_000_000, cached: 500_000, output: 1_000_000 };
    await writeLogRows(store, [
      ledgerRow('openai', GPT, '2026-10-01', big, GPT_PRICE), ledgerRow('openai', GPT, '2026-10-01', big, GPT_PRICE),
      ledgerRow('openai', GPT, '2026-10-02', big, GPT_PRICE),
    ]);
    sim.results['openai-completions'].set('2026-10-01', [openaiUsage(2)]);
    sim.results['openai-completions'].set('2026-10-02', [openaiUsage(1)]);
    // A cent more than the ledger on the first day: inside $0.50.
    sim.results['openai-costs'].set('2026-10-01', [...openaiCosts(2), { object: 'organization.costs.result', amount: { value: 0.01, currency: 'usd' }, line_item: `${GPT}, output`, project_id: 'proj_main' }]);
    sim.results['openai-costs'].set('2026-10-02', openaiCosts(1));
    const before = sim.requests.length;
    const run = await runReconciliation({ db: store.db, keyring, clock: Date.now, log }, settings(receiver.url),
      { range: { fromDay: '2026-10-01', toDay: '2026-10-03' }, providers: ['openai'], trigger: 'cli' });
    assert.equal(run.state, 'ok', JSON.stringify(run, null, 1));
    assert.equal(run.flagged_rows, 0);
    assert.equal(run.alert_state, null);
    assert.deepEqual(run.differences.map((d) => [d.day, d.model, d.ledger.requests, d.report.requests, d.flagged]), [
      ['2026-10-01', GPT, 2, 2, false], ['2026-10-02', GPT, 1, 1, false],
    ]);
    assert.equal(run.differences[0]!.report.cost_nanos! - run.differences[0]!.ledger.cost_nanos, 10_000_000);
    assert.equal(run.differences[0]!.report.input_tokens, 4_000_000);
    assert.equal(run.differences[0]!.report.cached_input_tokens, 1_000_000);
    // Three days, one bucket a page: three pages of each of the three endpoints, the admin key as Bearer.
    const served = sim.requests.slice(before);
    for (const path of ['/v1/organization/usage/completions', '/v1/organization/usage/embeddings', '/v1/organization/costs']) {
      const pages = served.filter((r) => r.path === path);
      assert.deepEqual(pages.map((r) => r.query.get('page')), [null, '1', '2'], path);
      assert.equal(pages[0]!.query.get('bucket_width'), '1d');
    }
    assert.deepEqual(served.find((r) => r.path.endsWith('/completions'))!.query.getAll('group_by'), ['model', 'api_key_id', 'project_id']);
    assert.deepEqual(served.find((r) => r.path.endsWith('/costs'))!.query.getAll('group_by'), ['line_item', 'project_id']);
    assert.equal(receiver.received.length, 0);
  });

  it('flags a key used outside, a wrong price and a missing day with their causes, and sends one signed webhook', async () => {
    const big = { prompt: 2_000_000, cached: 500_000, output: 1_000_000 };
    await writeLogRows(store, [
      ledgerRow('openai', GPT, '2026-10-11', big, GPT_PRICE),
      ledgerRow('openai', GPT, '2026-10-12', big, GPT_PRICE),
      ledgerRow('openai', GPT, '2026-10-13', big, GPT_PRICE),
    ]);
    // Day 11: three more calls on a key Tollgate does not use.
    sim.results['openai-completions'].set('2026-10-11', [openaiUsage(1), openaiUsage(3, 'key_laptop')]);
    sim.results['openai-costs'].set('2026-10-11', openaiCosts(4));
    // Day 12: the same usage, output billed at $1.20/M where the table says $0.60/M.
    sim.results['openai-completions'].set('2026-10-12', [openaiUsage(1)]);
    sim.results['openai-costs'].set('2026-10-12', openaiCosts(1, 1.2));
    // Day 13: nothing in the report.
    const run = await runReconciliation({ db: store.db, keyring, clock: Date.now, log }, settings(receiver.url),
      { range: { fromDay: '2026-10-11', toDay: '2026-10-13' }, providers: ['openai'], trigger: 'cli' });
    assert.equal(run.state, 'flagged');
    assert.equal(run.flagged_rows, 3);
    const byDay = new Map(run.differences.map((d) => [d.day, d]));
    const outside = byDay.get('2026-10-11')!;
    assert.deepEqual(outside.causes.map((c) => c.code), ['used_outside']);
    assert.match(outside.causes[0]!.message, /keys used outside Tollgate: the provider counted 3 more requests and 9000000 more tokens/);
    assert.match(outside.causes[0]!.message, /key_laptop \(9000000 tokens\)/);
    assert.doesNotMatch(outside.causes[0]!.message, /key_tollgate/);
    const price = byDay.get('2026-10-12')!;
    assert.deepEqual(price.causes.map((c) => c.code), ['price_differs']);
    assert.match(price.causes[0]!.message, /price table differs from the provider's price for gpt-4o-mini-2024-07-18: output \$1\.2\/M billed, \$0\.6\/M in the price table/);
    assert.doesNotMatch(price.causes[0]!.message, /input/);
    const missing = byDay.get('2026-10-13')!;
    assert.equal(missing.report.present, false);
    assert.deepEqual(missing.causes.map((c) => c.code), ['missing_day']);
    assert.match(missing.causes[0]!.message, /missing day: the provider's report has nothing for openai on 2026-10-13/);

    const [hook] = await receiver.waitFor(1);
    assert.equal(run.alert_state, 'delivered');
    const timestamp = String(hook!.headers['x-tollgate-timestamp']);
    const expected = `sha256=${createHmac('sha256', SECRET).update(`${timestamp}.${hook!.raw}`).digest('hex')}`;
    assert.equal(hook!.headers['x-tollgate-signature'], expected);
    assert.equal(hook!.headers['x-tollgate-alert-id'], `reconciliation-${run.id}`);
    const payload = JSON.parse(hook!.raw) as { type: string; run_id: number; flagged_rows: number; differences: Array<{ day: string; causes: Array<{ code: string }> }> };
    assert.equal(payload.type, 'reconciliation.flagged');
    assert.equal(payload.run_id, run.id);
    assert.deepEqual(payload.differences.map((d) => [d.day, d.causes[0]!.code]), [['2026-10-11', 'used_outside'], ['2026-10-12', 'price_differs'], ['2026-10-13', 'missing_day']]);
  });

  it('names unbilled failures when the provider billed tokens for calls the ledger logged as failed', async () => {
    const big = { prompt: 2_000_000, cached: 500_000, output: 1_000_000 };
    await writeLogRows(store, [
      ledgerRow('openai', GPT, '2026-10-15', big, GPT_PRICE), ledgerRow('openai', GPT, '2026-10-15', big, GPT_PRICE),
      { ...ledgerRow('openai', GPT, '2026-10-15', { prompt: 0, output: 0 }, GPT_PRICE, 502), prompt_tokens: null, completion_tokens: null, cached_tokens: null, cache_write_tokens: null },
    ]);
    // The provider counts the three calls and bills the third's tokens, which the ledger never saw.
    sim.results['openai-completions'].set('2026-10-15', [openaiUsage(3)]);
    sim.results['openai-costs'].set('2026-10-15', openaiCosts(3));
    const run = await runReconciliation({ db: store.db, keyring, clock: Date.now, log }, settings(),
      { range: { fromDay: '2026-10-15', toDay: '2026-10-15' }, providers: ['openai'], trigger: 'cli' });
    const [row] = run.differences;
    assert.equal(row!.ledger.failed_requests, 1);
    assert.deepEqual(row!.causes.map((c) => c.code), ['unbilled_failures']);
    assert.match(row!.causes[0]!.message, /unbilled failures: the provider counted 3000000 more tokens for the same 2 requests, and the ledger has 1 failed requests it did not bill/);
  });

  it('reads Anthropic\'s usage and cost report (cache kinds, cents), matching on one day and flagging outside usage and a missing ledger day', async () => {
    await setUsageReportCredential(store.db, keyring, { provider: 'anthropic', kind: 'anthropic', adminKey: ANTHROPIC_ADMIN_KEY, baseUrl: sim.origin });
    const tokens = { prompt: 1_000_000, cached: 200_000, write: 100_000, output: 100_000 };
    await writeLogRows(store, [ledgerRow('anthropic', CLAUDE, '2026-10-21', tokens, CLAUDE_PRICE), ledgerRow('anthropic', CLAUDE, '2026-10-22', tokens, CLAUDE_PRICE)]);
    const usage = (apiKeyId: string, times = 1) => ({
      uncached_input_tokens: 700_000 * times, cache_read_input_tokens: 200_000 * times,
      cache_creation: { ephemeral_5m_input_tokens: 100_000 * times, ephemeral_1h_input_tokens: 0 }, output_tokens: 100_000 * times,
      server_tool_use: { web_search_requests: 0 }, api_key_id: apiKeyId, workspace_id: 'wrkspc_main', model: CLAUDE, service_tier: 'standard', context_window: '0-200k',
    });
    const cost = (times = 1) => [
      ['uncached_input_tokens', 210], ['cache_read_input_tokens', 6], ['cache_creation.ephemeral_5m_input_tokens', 37.5], ['output_tokens', 150],
    ].map(([type, cents]) => ({ currency: 'USD', amount: (Number(cents) * times).toFixed(5), workspace_id: 'wrkspc_main', description: `Claude Sonnet 4.5 ${type}`, cost_type: 'tokens', context_window: '0-200k', model: CLAUDE, service_tier: 'standard', token_type: type }));
    sim.results['anthropic-usage'].set('2026-10-21', [usage('apikey_gateway')]);
    sim.results['anthropic-cost'].set('2026-10-21', cost());
    sim.results['anthropic-usage'].set('2026-10-22', [usage('apikey_gateway'), usage('apikey_other', 2)]);
    sim.results['anthropic-cost'].set('2026-10-22', cost(3));
    sim.results['anthropic-usage'].set('2026-10-23', [usage('apikey_other')]);
    sim.results['anthropic-cost'].set('2026-10-23', cost());
    const run = await runReconciliation({ db: store.db, keyring, clock: Date.now, log }, settings(),
      { range: { fromDay: '2026-10-21', toDay: '2026-10-23' }, providers: ['anthropic'], trigger: 'api' });
    assert.equal(run.state, 'flagged');
    assert.equal(run.alert_state, 'unsent');
    const [match, outside, missing] = run.differences;
    assert.equal(match!.flagged, false, JSON.stringify(match));
    assert.equal(match!.report.requests, null);
    assert.deepEqual([match!.report.input_tokens, match!.report.cached_input_tokens, match!.report.cache_write_tokens], [1_000_000, 200_000, 100_000]);
    assert.equal(match!.report.cost_nanos, match!.ledger.cost_nanos);
    assert.equal(match!.ledger.cost_nanos, 4_035_000_000);
    assert.deepEqual(outside!.causes.map((c) => c.code), ['used_outside']);
    assert.match(outside!.causes[0]!.message, /the provider counted 2200000 more tokens/);
    assert.equal(missing!.day, '2026-10-23');
    assert.equal(missing!.ledger.present, false);
    assert.deepEqual(missing!.causes.map((c) => c.code), ['missing_day']);
    assert.match(missing!.causes[0]!.message, /the ledger has no anthropic request on 2026-10-23 while the provider billed \$4\.035/);
    const anthropicCalls = sim.requests.filter((r) => r.path === '/v1/organizations/usage_report/messages');
    assert.deepEqual(anthropicCalls.map((r) => r.query.get('page')), [null, '1', '2']);
    assert.deepEqual(anthropicCalls[0]!.query.getAll('group_by[]'), ['model', 'api_key_id', 'workspace_id']);
  });

  it('stores the run as failed, with the provider\'s message and never the key, when the admin key is refused', async () => {
    await setUsageReportCredential(store.db, keyring, { provider: 'openai', kind: 'openai', adminKey: 'sk-admin-wrong-0123456789abcdef', baseUrl: `${sim.origin}/v1` });
    const run = await runReconciliation({ db: store.db, keyring, clock: Date.now, log }, settings(),
      { range: { fromDay: '2026-10-01', toDay: '2026-10-01' }, providers: ['openai'], trigger: 'cli' });
    assert.equal(run.state, 'failed');
    assert.match(run.error!, /openai: \/v1\/organization\/usage\/(completions|embeddings) answered HTTP 401: Incorrect API key provided\.|openai: \/v1\/organization\/costs answered HTTP 401/);
    assert.doesNotMatch(run.error!, /sk-admin/);
    const [view] = (await listUsageReportCredentials(store.db)).filter((c) => c.provider === 'openai');
    assert.equal(view!.hint, 'sk-…cdef');
    await setUsageReportCredential(store.db, keyring, { provider: 'openai', kind: 'openai', adminKey: OPENAI_ADMIN_KEY, baseUrl: `${sim.origin}/v1`, gatewayKeyIds: ['key_tollgate'] });
  });

  it('compares per provider key where the report names it: a key that is not Tollgate\'s is flagged with its spend, a mapped key with the log\'s rows on its credential', async () => {
    await setUsageReportCredential(store.db, keyring, {
      provider: 'openai', kind: 'openai', adminKey: OPENAI_ADMIN_KEY, baseUrl: `${sim.origin}/v1`, keyMap: { key_tollgate: '…a1b2' },
    });
    const big = { prompt: 2_000_000, cached: 500_000, output: 1_000_000 };
    await writeLogRows(store, [
      { ...ledgerRow('openai', GPT, '2026-10-25', big, GPT_PRICE), upstream_key: '…a1b2' },
      { ...ledgerRow('openai', GPT, '2026-10-26', big, GPT_PRICE), upstream_key: '…a1b2' },
    ]);
    // Day 25: Tollgate's key as logged (its cache writes counted, OpenAI's input_cache_write_tokens), and a laptop's key.
    sim.results['openai-completions'].set('2026-10-25', [{ ...openaiUsage(1), input_cache_write_tokens: 100_000 }, openaiUsage(3, 'key_laptop')]);
    sim.results['openai-costs'].set('2026-10-25', openaiCosts(4));
    // Day 26: Tollgate's own key made three calls where the log has one: the key is used elsewhere too.
    sim.results['openai-completions'].set('2026-10-26', [openaiUsage(3)]);
    sim.results['openai-costs'].set('2026-10-26', openaiCosts(3));
    const run = await runReconciliation({ db: store.db, keyring, clock: Date.now, log }, settings(),
      { range: { fromDay: '2026-10-25', toDay: '2026-10-26' }, providers: ['openai'], trigger: 'cli' });
    assert.equal(run.state, 'flagged');
    // The day × model rows stay as they were.
    assert.deepEqual(run.differences.map((d) => [d.day, d.model, d.flagged, d.causes.map((c) => c.code)]), [
      ['2026-10-25', GPT, true, ['used_outside']], ['2026-10-26', GPT, true, ['used_outside']],
    ]);
    assert.equal(run.differences[0]!.report.cache_write_tokens, 100_000);
    assert.deepEqual(run.key_differences.map((k) => [k.day, k.api_key_id, k.upstream_key, k.tollgate_key, k.flagged, k.ledger.requests, k.report.requests]), [
      ['2026-10-25', 'key_laptop', null, false, true, 0, 3],
      ['2026-10-25', 'key_tollgate', '…a1b2', true, false, 1, 1],
      ['2026-10-26', 'key_tollgate', '…a1b2', true, true, 1, 3],
    ]);
    const [laptop, , shared] = run.key_differences;
    assert.deepEqual(laptop!.causes.map((c) => c.code), ['used_outside']);
    // 3 × (1.5M input at $0.15 + 0.5M cached at $0.075 + 1M output at $0.60) = $2.5875.
    assert.match(laptop!.causes[0]!.message, /^used outside Tollgate: key key_laptop is not Tollgate's; 3 requests, 9000000 tokens, \$2\.5875 at the price table's price$/);
    assert.equal(laptop!.report.cost_nanos, 2_587_500_000);
    assert.match(shared!.causes[0]!.message, /key key_tollgate \(Tollgate's …a1b2\) is also used outside Tollgate: the provider counted 6000000 more tokens on it than the log/);
    assert.equal(run.alert_state, 'unsent');

    // Not grouped by key, the report sums the keys and names none (OpenAI's documented grouping).
    const window = `start_time=${Date.parse('2026-10-25T00:00:00Z') / 1000}&end_time=${Date.parse('2026-10-26T00:00:00Z') / 1000}&bucket_width=1d`;
    const res = await fetch(`${sim.origin}/v1/organization/usage/completions?${window}&group_by=model`, { headers: { authorization: `Bearer ${OPENAI_ADMIN_KEY}` } });
    const page = await res.json() as { data: Array<{ results: Array<{ api_key_id: string | null; num_model_requests: number; input_cache_write_tokens?: number }> }> };
    assert.deepEqual(page.data[0]!.results.map((r) => [r.api_key_id, r.num_model_requests, r.input_cache_write_tokens]), [[null, 4, 100_000]]);
    await setUsageReportCredential(store.db, keyring, { provider: 'openai', kind: 'openai', adminKey: OPENAI_ADMIN_KEY, baseUrl: `${sim.origin}/v1`, gatewayKeyIds: ['key_tollgate'] });
  });

  it('keeps a flagged run\'s webhook that the receiver refused pending, and the job of a restarted gateway delivers it', async () => {
    const down = await startWebhookReceiver({ statuses: [500] });
    after(() => down.close());
    await writeLogRows(store, [ledgerRow('openai', GPT, '2026-10-27', { prompt: 2_000_000, cached: 500_000, output: 1_000_000 }, GPT_PRICE)]);
    const run = await runReconciliation({ db: store.db, keyring, clock: Date.now, log }, settings(down.url),
      { range: { fromDay: '2026-10-27', toDay: '2026-10-27' }, providers: ['openai'], trigger: 'cli' });
    assert.equal(run.state, 'flagged');
    await down.waitFor(1);
    assert.equal(run.alert_state, 'pending');
    const queued = await store.db.selectFrom('reconciliation_alerts').selectAll().where('run_id', '=', run.id).executeTakeFirstOrThrow();
    assert.deepEqual([queued.state, Number(queued.attempts)], ['pending', 1]);
    assert.match(queued.last_error!, /^HTTP 500/);
    assert.ok(queued.next_attempt_at! > new Date().toISOString());
    // A new process (its job over the same database), once the retry is due.
    const later = () => Date.now() + 2 * 3_600_000;
    const job = createReconcileJob({ db: store.db, keyring: () => keyring, clock: later, log, leases: { tryAcquire: async () => false } },
      { ...settings(down.url), enabled: false, timeOfDay: '04:00', lookbackDays: 1 });
    await job.retryAlerts();
    await job.close();
    assert.equal(down.received.length, 2);
    assert.equal(down.received[1]!.raw, down.received[0]!.raw);
    assert.equal(down.received[1]!.headers['x-tollgate-alert-id'], `reconciliation-${run.id}`);
    const [listed] = (await listRuns(store.db, 200)).filter((r) => r.id === run.id);
    assert.equal(listed!.alert_state, 'delivered');
    const delivered = await store.db.selectFrom('reconciliation_alerts').selectAll().where('run_id', '=', run.id).executeTakeFirstOrThrow();
    assert.deepEqual([delivered.state, Number(delivered.attempts), delivered.next_attempt_at], ['delivered', 2, null]);
  });
});

describe('reconciliation of a ledger written by a real gateway, through the CLI and the admin API', () => {
  let openai: OpenAISimulator;
  let reports: UsageReportSimulator;
  let tg: TestGateway;
  const today = new Date().toISOString().slice(0, 10);

  before(async () => {
    openai = await startOpenAISimulator();
    reports = await startUsageReportSimulator({ openaiKey: OPENAI_ADMIN_KEY, anthropicKey: ANTHROPIC_ADMIN_KEY, bucketsPerPage: 1 });
    tg = await startTestGateway({ providers: { openai: { type: 'openai', baseUrl: openai.baseUrl, apiKey: 'sk-test' } } });
    await setPrice(tg.gateway.store.db, { model: 'gpt-4o-mini', provider: 'openai', input_price_per_million: 0.15, output_price_per_million: 0.6, cached_input_price_per_million: 0.075 });
    tg.gateway.store.notifyChange();
  });
  after(async () => {
    await tg.close();
    await openai.close();
    await reports.close();
  });

  it('finds the gateway\'s own requests in a matching report, prints the report, and lists the run in the admin API', async () => {
    for (let i = 0; i < 3; i++) await tg.client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: `hi ${i}` }] });
    const rows = await tg.logRowsOf('openai/gpt-4o-mini', 3);
    const served = rows[0]!.model_served!;
    // The log names the credential that served, by its fingerprint (the key itself never).
    assert.deepEqual(rows.map((r) => r.upstream_key), [keyFingerprint('sk-test'), keyFingerprint('sk-test'), keyFingerprint('sk-test')]);
    const sum = (f: (r: typeof rows[number]) => number) => rows.reduce((s, r) => s + f(r), 0);
    reports.results['openai-completions'].set(today, [{
      object: 'organization.usage.completions.result', input_tokens: sum((r) => r.prompt_tokens ?? 0), input_cached_tokens: sum((r) => r.cached_tokens ?? 0),
      output_tokens: sum((r) => r.completion_tokens ?? 0), num_model_requests: 3, project_id: null, user_id: null, api_key_id: 'key_gateway', model: served, batch: false,
    }]);
    // Cost: the ledger's own total, as OpenAI's JSON number of USD.
    reports.results['openai-costs'].set(today, [{ object: 'organization.costs.result', amount: { value: sum((r) => r.cost_nanos ?? 0) / 1e9, currency: 'usd' }, line_item: `${served}, output`, project_id: null }]);
    const cli = await runCli(['credentials', 'set-admin', '--provider', 'openai', '--admin-key-stdin', '--base-url', `${reports.origin}/v1`, '--gateway-key-ids', 'key_gateway'],
      { dataDir: tg.dataDir, input: OPENAI_ADMIN_KEY });
    assert.equal(cli.code, 0, cli.stderr);
    assert.doesNotMatch(cli.stdout, /sk-admin-test-0123456789abcdef/);
    // Sealed under the data dir's master key, like every provider credential.
    const sealedRow = await tg.gateway.store.db.selectFrom('usage_report_credentials').selectAll().executeTakeFirstOrThrow();
    assert.equal(sealedRow.key_id, loadKeyring(tg.dataDir).current.id);
    assert.equal(Buffer.from(sealedRow.ciphertext).includes(Buffer.from(OPENAI_ADMIN_KEY)), false);

    const report = await runCli(['reconcile', '--from', today, '--to', today], { dataDir: tg.dataDir });
    assert.equal(report.code, 0, report.stderr + report.stdout);
    assert.match(report.stdout, new RegExp(`^Reconciliation run \\d+: ${today} to ${today}, openai: OK$`, 'm'));
    assert.match(report.stdout, /^DAY\s+PROVIDER\s+MODEL\s+REQUESTS L\/P\s+TOKENS IN\/OUT LEDGER\s+TOKENS IN\/OUT PROVIDER\s+COST LEDGER\s+COST PROVIDER\s+FLAG$/m);
    assert.match(report.stdout, new RegExp(`^${today}\\s+openai\\s+${served.replace(/[.]/g, '\\.')}\\s+3/3\\s+${sum((r) => r.prompt_tokens ?? 0)}/${sum((r) => r.completion_tokens ?? 0)}\\s+\\S+\\s+\\S+\\s+\\S+\\s+ok$`, 'm'));
    assert.match(report.stdout, /^Total: ledger \$\d+\.\d{4}, provider \$\d+\.\d{4}; 0 row\(s\) flagged$/m);

    // The same day with three calls on a laptop's key: exit code 2 and the cause, in the table and as JSON.
    reports.results['openai-completions'].set(today, [...reports.results['openai-completions'].get(today)!, openaiUsage(3, 'key_laptop', served)]);
    reports.results['openai-costs'].set(today, [...reports.results['openai-costs'].get(today)!, ...openaiCosts(3, 0.6, served)]);
    const flagged = await runCli(['reconcile', '--from', today, '--to', today, '--provider', 'openai'], { dataDir: tg.dataDir });
    assert.equal(flagged.code, 2, flagged.stderr);
    assert.match(flagged.stdout, /FLAGGED$/m);
    assert.match(flagged.stdout, /keys used outside Tollgate: .*key_laptop \(9000000 tokens\)/);
    const admin = await loginAdmin(tg.gateway.origin);
    const runs = await admin.get('/admin/api/reconciliation/runs');
    assert.equal(runs.status, 200);
    assert.deepEqual(runs.body.data.filter((r: { trigger: string }) => r.trigger === 'cli').map((r: { state: string; trigger: string }) => [r.state, r.trigger]), [['flagged', 'cli'], ['ok', 'cli']]);
    // The CLI's run: the gateway's daily job may have stored a scheduled one since (a slow machine passes its minute tick).
    const cliRun = runs.body.data.find((r: { trigger: string }) => r.trigger === 'cli');
    const one = await admin.get(`/admin/api/reconciliation/runs/${cliRun.id}`);
    assert.equal(one.status, 200);
    assert.equal(one.body.differences[0].model, served);
    assert.equal(one.body.differences[0].causes[0].code, 'used_outside');
    assert.equal(typeof one.body.differences[0].ledger.cost_usd, 'number');
    const missing = await admin.get('/admin/api/reconciliation/runs/999999');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, 'reconciliation_run_not_found');
    const credentials = await admin.get('/admin/api/reconciliation/credentials');
    assert.deepEqual(credentials.body.data.map((c: { provider: string; hint: string; gateway_key_ids: string[] }) => [c.provider, c.hint, c.gateway_key_ids]), [['openai', 'sk-…cdef', ['key_gateway']]]);
    assert.doesNotMatch(credentials.text, /sk-admin-test/);
  });

  it('runs the daily job once a day after its time, on the replica that holds the lease', async () => {
    const noon = Date.parse(`${today}T12:00:00.000Z`);
    let granted = false;
    const leases = { tryAcquire: async () => granted };
    const dataDir = tempDir();
    const store = await openTestStore(dataDir);
    after(() => store.close());
    const keyring = createKeyring(randomBytes(32));
    await setUsageReportCredential(store.db, keyring, { provider: 'openai', kind: 'openai', adminKey: OPENAI_ADMIN_KEY, baseUrl: `${reports.origin}/v1` });
    const job = createReconcileJob({ db: store.db, keyring: () => keyring, clock: () => noon, log, leases },
      { ...settings(), enabled: true, timeOfDay: '04:00', lookbackDays: 2 });
    const scheduled = async () => (await listRuns(store.db, 200)).filter((r) => r.trigger === 'schedule');
    await job.tick();
    assert.equal((await scheduled()).length, 0, 'another replica holds the lease');
    granted = true;
    await job.tick();
    await job.tick();
    const runs = await scheduled();
    assert.equal(runs.length, 1);
    assert.deepEqual([runs[0]!.from_day, runs[0]!.to_day], [dailyRange(noon, 2).fromDay, dailyRange(noon, 2).toDay]);
    await job.close();
    // Before its time of day, nothing runs.
    const early = createReconcileJob({ db: store.db, keyring: () => keyring, clock: () => noon + 86_400_000 - 11 * 3_600_000, log, leases },
      { ...settings(), enabled: true, timeOfDay: '23:30', lookbackDays: 1 });
    await early.tick();
    await early.close();
    assert.equal((await scheduled()).length, 1);
  });
});
