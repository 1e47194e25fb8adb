/**
 * The admin UI's "Reconciliation" page in real headless Chromium (as admin-ui.test.ts: Debian's
 * chromium driven by playwright-core): after a run that found three calls on a key Tollgate does not
 * use, the page lists the run as flagged, shows the day's row with its cause, and draws the chart of
 * ledger vs provider cost per day. No console errors. Without Chromium the test is skipped.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { HAVE_CHROMIUM, openBrowserPage, signInToAdmin } from '../helpers/browser.ts';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { writeLogRows } from '../helpers/log-rows.ts';
import { startUsageReportSimulator, type UsageReportSimulator } from '../helpers/usage-report-simulator.ts';
import { setUsageReportCredential } from '../../core/accounts/usage-report-credentials.ts';
import { loadKeyring } from '../../core/store/data-dir.ts';
import { runReconciliation } from '../../core/reconcile/reconcile-run.ts';

const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'admin-ui');
const ADMIN_KEY = 'sk-admin-ui-test-0123456789abcdef';
const MODEL = 'gpt-4o-mini-2024-07-18';

describe('the Reconciliation page in Chromium', { skip: HAVE_CHROMIUM ? false : 'Chromium is not installed' }, () => {
  let reports: UsageReportSimulator;
  let tg: TestGateway;
  let browser: Browser;
  let page: Page;
  let problems: string[] = [];

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    reports = await startUsageReportSimulator({ openaiKey: ADMIN_KEY, anthropicKey: 'unused', bucketsPerPage: 2 });
    tg = await startTestGateway({ providers: { openai: { type: 'openai', baseUrl: 'http://127.0.0.1:9', apiKey: 'sk-test' } } });
    const attempts = JSON.stringify([{ provider: 'openai', model: MODEL, status: 200, errorCode: null, latencyMs: 5 }]);
    const row = (day: string) => ({ provider: 'openai', model_requested: MODEL, model_served: MODEL, created_at: `${day}T09:00:00.000Z`, prompt_tokens: 1_000_000, completion_tokens: 1_000_000, cached_tokens: 0, cost_nanos: 750_000_000, attempts });
    await writeLogRows(tg.gateway.store, [row('2026-09-01'), row('2026-09-02')]);
    const usage = (requests: number, key: string) => ({ object: 'organization.usage.completions.result', input_tokens: 1_000_000 * requests, input_cached_tokens: 0, output_tokens: 1_000_000 * requests, num_model_requests: requests, project_id: null, user_id: null, api_key_id: key, model: MODEL, batch: false });
    const cost = (usd: number) => ({ object: 'organization.costs.result', amount: { value: usd, currency: 'usd' }, line_item: `${MODEL}, output`, project_id: null });
    reports.results['openai-completions'].set('2026-09-01', [usage(1, 'key_gw')]);
    reports.results['openai-costs'].set('2026-09-01', [cost(0.75)]);
    reports.results['openai-completions'].set('2026-09-02', [usage(1, 'key_gw'), usage(3, 'key_laptop')]);
    reports.results['openai-costs'].set('2026-09-02', [cost(3)]);
    const keyring = loadKeyring(tg.dataDir);
    await setUsageReportCredential(tg.gateway.store.db, keyring, { provider: 'openai', kind: 'openai', adminKey: ADMIN_KEY, baseUrl: `${reports.origin}/v1`, gatewayKeyIds: ['key_gw'] });
    const run = await runReconciliation({ db: tg.gateway.store.db, keyring, clock: Date.now }, { tolerancePercent: 1, toleranceUsd: 0.5, timeoutMs: 10_000 },
      { range: { fromDay: '2026-09-01', toDay: '2026-09-02' }, trigger: 'cli' });
    assert.equal(run.state, 'flagged');
    ({ browser, page, problems } = await openBrowserPage({ width: 1366, height: 900 }));
  });

  after(async () => {
    await browser?.close();
    await tg?.close();
    await reports?.close();
  });

  test('lists the flagged run, its rows with the cause, and the chart of ledger vs provider cost', async () => {
    await signInToAdmin(page, tg.gateway.origin);
    await page.getByRole('link', { name: 'Reconciliation' }).click();
    await page.getByRole('heading', { name: 'Reconciliation', exact: true }).waitFor();
    const runs = page.getByTestId('reconciliation-runs');
    await runs.locator('tbody tr').first().waitFor();
    assert.match(await runs.locator('tbody tr').first().innerText(), /flagged/);
    const rows = page.getByTestId('reconciliation-differences').locator('tbody tr');
    await rows.nth(1).waitFor();
    assert.equal(await rows.count(), 2);
    assert.match(await rows.nth(0).innerText(), /within tolerance/);
    const cause = rows.nth(1).locator('[data-cause="used_outside"]');
    assert.match(await cause.innerText(), /keys used outside Tollgate.*key_laptop/);
    const chart = page.getByTestId('reconciliation-chart');
    assert.match(await chart.locator('desc').textContent() ?? '', /2026-09-01: ledger \$0\.75, provider \$0\.75; 2026-09-02: ledger \$0\.75, provider \$3\.00/);
    assert.equal(await chart.locator('path').count(), 2);
    await page.screenshot({ path: join(ARTIFACTS, 'reconciliation.png'), fullPage: true });
    assert.deepEqual(problems, []);
  });
});
