/**
 * Costs anyone can verify and fix (issue 15 item 4): each log row keeps the usage report and the price
 * it was billed at; after a price fix, `POST /admin/api/pricing/reprice` and `tollgate pricing reprice`
 * bill the rows again, exactly (integer nanos), in the log, the rollups and the user's spend.
 *
 * Prices: `gpt-4o-mini` set wrongly at $10 / $20 per million tokens, so the simulator's usage (19 prompt
 * + 24 completion) costs 19 × 10,000 + 24 × 20,000 = 670,000 nanos; fixed to $1 / $2 it costs
 * 19 × 1,000 + 24 × 2,000 = 67,000 nanos.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { dataDirWithPrices } from '../helpers/prices.ts';
import { loginAdmin, type AdminClient } from '../helpers/admin-client.ts';
import { cliJson, runCli } from '../helpers/cli.ts';
import { quarterOf } from '../../core/request-log/usage-rollup-writer.ts';

const WRONG_NANOS = 670_000;
const FIXED_NANOS = 67_000;

let sim: OpenAISimulator;
let tg: TestGateway;
let admin: AdminClient;

before(async () => {
  sim = await startOpenAISimulator();
  tg = await startTestGateway({
    dataDir: await dataDirWithPrices([{ model: 'gpt-4o-mini', provider: 'openai', input: 10, output: 20 }]),
    providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-test' } },
    config: { pricing: { seedOnFirstStart: false } },
    user: { budgetUsd: 1, budgetPeriod: 'monthly' },
  });
  admin = await loginAdmin(tg.gateway.origin);
});
after(async () => {
  await tg?.close();
  await sim?.close();
});

async function chat(): Promise<string> {
  const res = await tg.post('/chat/completions', { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 40 });
  assert.equal(res.status, 200, res.text);
  await tg.logRow(res.requestId);
  return res.requestId;
}

const db = () => tg.gateway.store.db;
const costs = async () => (await db().selectFrom('llm_requests').select('cost_nanos').where('model_served', '=', 'gpt-4o-mini').orderBy('id').execute())
  .map((r) => r.cost_nanos);
const rollupCost = async () => (await db().selectFrom('usage_rollups').select((eb) => eb.fn.sum<number>('cost_nanos').as('sum'))
  .where('model_served', '=', 'gpt-4o-mini').executeTakeFirstOrThrow()).sum;
const storedSpend = async () => (await db().selectFrom('gateway_users').select('budget_spent_nanos').where('id', '=', tg.userId)
  .executeTakeFirstOrThrow()).budget_spent_nanos;

/** Requests, cost and unpriced count per rollup key: from `usage_rollups`, and summed from the log as the writer does. */
async function rollupsAndLog(): Promise<[string[], string[]]> {
  const keyOf = (r: { bucket: string; user: number | null; provider: string | null; requested: string | null; served: string | null }) =>
    [r.bucket, r.user ?? 0, r.provider ?? '', r.requested ?? '', r.served ?? ''].join('|');
  const rollups = (await db().selectFrom('usage_rollups').selectAll().execute()).map((r) =>
    `${keyOf({ bucket: r.bucket_start, user: r.gateway_user_id, provider: r.provider, requested: r.model_requested, served: r.model_served })}`
    + ` ${r.requests} ${r.cost_nanos} ${r.unpriced_requests}`).sort();
  const sums = new Map<string, [number, number, number]>();
  for (const r of await db().selectFrom('llm_requests').selectAll().execute()) {
    const key = keyOf({ bucket: quarterOf(r.created_at), user: r.gateway_user_id, provider: r.provider, requested: r.model_requested, served: r.model_served });
    const sum = sums.get(key) ?? [0, 0, 0];
    sums.set(key, [sum[0] + 1, sum[1] + (r.cost_nanos ?? 0), sum[2] + r.unpriced]);
  }
  return [rollups, [...sums].map(([key, [requests, cost, unpriced]]) => `${key} ${requests} ${cost} ${unpriced}`).sort()];
}
async function accountSpentUsd(): Promise<number> {
  const res = await fetch(`${tg.gateway.origin}/api/account`, { headers: { authorization: `Bearer ${tg.apiKey}` } });
  return ((await res.json()) as { budget: { spent_usd: number } }).budget.spent_usd;
}

describe('re-pricing', () => {
  test('a log row keeps the usage report and the price it was billed at', async () => {
    const id = await chat();
    const row = await tg.logRow(id);
    assert.equal(row.cost_nanos, WRONG_NANOS);
    const usage = JSON.parse(row.usage_reported!);
    assert.equal(usage.prompt_tokens, 19);
    assert.equal(usage.completion_tokens, 24);
    const price = JSON.parse(row.billed_price!);
    assert.equal(price.model, 'gpt-4o-mini');
    assert.equal(price.input_price_per_million, 10);
    assert.equal(price.output_price_per_million, 20);
  });

  test('the admin preview changes nothing; applying it re-bills the rows, the rollups and the spend exactly', async () => {
    await chat();
    await chat();
    assert.deepEqual(await costs(), [WRONG_NANOS, WRONG_NANOS, WRONG_NANOS]);
    assert.equal(await storedSpend(), 3 * WRONG_NANOS);
    const put = await admin.put('/admin/api/pricing/gpt-4o-mini', { provider: 'openai', input_price_per_million: 1, output_price_per_million: 2 });
    assert.equal(put.status, 200, JSON.stringify(put.body));

    const preview = await admin.post('/admin/api/pricing/reprice', { model: 'gpt-4o-mini', from: '2020-01-01', dry_run: true });
    assert.equal(preview.status, 200, JSON.stringify(preview.body));
    assert.equal(preview.body.dry_run, true);
    assert.equal(preview.body.rows, 3);
    assert.equal(preview.body.changed_rows, 3);
    assert.equal(preview.body.cost_before_nanos, 3 * WRONG_NANOS);
    assert.equal(preview.body.cost_after_nanos, 3 * FIXED_NANOS);
    assert.deepEqual(preview.body.spend.map((s: { user_id: number; spent_before_nanos: number; spent_after_nanos: number }) =>
      [s.user_id, s.spent_before_nanos, s.spent_after_nanos]), [[tg.userId, 3 * WRONG_NANOS, 3 * FIXED_NANOS]]);
    assert.deepEqual(await costs(), [WRONG_NANOS, WRONG_NANOS, WRONG_NANOS], 'a preview writes nothing');
    assert.equal(await storedSpend(), 3 * WRONG_NANOS);

    const applied = await admin.post('/admin/api/pricing/reprice', { model: 'gpt-4o-mini', from: '2020-01-01' });
    assert.equal(applied.status, 200, JSON.stringify(applied.body));
    assert.equal(applied.body.changed_rows, 3);
    assert.deepEqual(await costs(), [FIXED_NANOS, FIXED_NANOS, FIXED_NANOS]);
    const billed = JSON.parse((await db().selectFrom('llm_requests').select('billed_price').where('model_served', '=', 'gpt-4o-mini')
      .limit(1).executeTakeFirstOrThrow()).billed_price!);
    assert.equal(billed.input_price_per_million, 1);
    assert.equal(await rollupCost(), 3 * FIXED_NANOS);
    assert.equal(await storedSpend(), 3 * FIXED_NANOS);
    assert.equal(await accountSpentUsd(), (3 * FIXED_NANOS) / 1e9, 'the running ledger re-read the spend');

    // The rollups the writer keeps equal a rebuild from the log.
    const [rollups, fromLog] = await rollupsAndLog();
    assert.ok(rollups.length > 0);
    assert.deepEqual(rollups, fromLog);

    // The next request's spend is added to the corrected one.
    await chat();
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(await storedSpend(), 4 * FIXED_NANOS);
  });

  test('the admin API refuses a bad range with 400', async () => {
    const res = await admin.post('/admin/api/pricing/reprice', { model: 'gpt-4o-mini', from: '2026-11-02', to: '2026-11-01' });
    assert.equal(res.status, 400);
    assert.equal(res.body.error.param, 'to');
    const unknownField = await admin.post('/admin/api/pricing/reprice', { model: 'gpt-4o-mini', from: '2026-11-01', everything: true });
    assert.equal(unknownField.status, 400);
  });

  test('the CLI re-prices beside a running gateway: the spend it corrects is kept by the gateway\'s next write', async () => {
    // The price goes back up ($2 / $4: 19 × 2,000 + 24 × 4,000 = 134,000 nanos) through the CLI.
    const set = await runCli(['pricing', 'set', 'gpt-4o-mini', '--provider', 'openai', '--input', '2', '--output', '4'], { dataDir: tg.dataDir });
    assert.equal(set.code, 0, set.stderr);
    const dry = await cliJson<{ rows: number; cost_before_nanos: number; cost_after_nanos: number; dry_run: boolean }>(
      ['pricing', 'reprice', '--model', 'gpt-4o-mini', '--from', '2020-01-01', '--dry-run', '--json'], { dataDir: tg.dataDir });
    assert.equal(dry.dry_run, true);
    assert.equal(dry.rows, 4);
    assert.equal(dry.cost_before_nanos, 4 * FIXED_NANOS);
    assert.equal(dry.cost_after_nanos, 4 * 134_000);
    assert.equal(await storedSpend(), 4 * FIXED_NANOS);

    const human = await runCli(['pricing', 'reprice', '--model', 'gpt-4o-mini', '--from', '2020-01-01'], { dataDir: tg.dataDir });
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /Re-priced gpt-4o-mini/);
    assert.match(human.stdout, /4 rows with usage, 4 changed/);
    assert.match(human.stdout, /spend this period \$0\.000268 -> \$0\.000536/);
    assert.equal(await storedSpend(), 4 * 134_000);
    assert.deepEqual(await costs(), [134_000, 134_000, 134_000, 134_000]);

    // The gateway's ledger still held 268,000 in memory; its next settlement adds a delta, so the CLI's fix stays.
    await chat();
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(await storedSpend(), 5 * 134_000);
  });

  test('the CLI refuses a date that is not one', async () => {
    const res = await runCli(['pricing', 'reprice', '--model', 'gpt-4o-mini', '--from', 'yesterday'], { dataDir: tg.dataDir });
    assert.notEqual(res.code, 0);
    assert.match(res.stderr, /--from must be an ISO-8601 date/);
  });
});
