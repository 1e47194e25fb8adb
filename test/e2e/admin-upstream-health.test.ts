/**
 * The admin UI's "Upstream health" page in real headless Chromium (as admin-ui.test.ts: Debian's
 * chromium driven by playwright-core): after a deployment failed enough to open its breaker and a
 * pooled key was refused (401) on two models, the page shows the deployment as open and the key as
 * disabled, by its fingerprint only, and its Enable button puts the key back into use. No console
 * errors. The gateway clock is moved by hand past the key's rest.
 * Without Chromium the test is skipped (admin-ui.test.ts says how to install it).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { HAVE_CHROMIUM, openBrowserPage, signInToAdmin } from '../helpers/browser.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { manualClock, startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';

const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'admin-ui');
const BAD_KEY = 'sk-refused-key-9999';

describe('the Upstream health page in Chromium', { skip: HAVE_CHROMIUM ? false : 'Chromium is not installed' }, () => {
  let sim: OpenAISimulator;
  let tg: TestGateway;
  let browser: Browser;
  let page: Page;
  let problems: string[] = [];

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    sim = await startOpenAISimulator();
    const clock = manualClock(Date.parse('2026-03-02T10:00:00Z'));
    tg = await startTestGateway({
      clock,
      providers: {
        flaky: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-flaky' },
        pooled: { type: 'openai', baseUrl: sim.baseUrl, apiKeys: [BAD_KEY, 'sk-good-key-0000'] },
      },
      router: {
        models: { guarded: { deployments: [{ provider: 'flaky', model: 'sim-500' }, { provider: 'pooled', model: 'gpt-4o-mini' }] } },
        circuitBreaker: { failureThreshold: 2, cooldownMs: 600_000 },
        keyCooldownMs: 60_000,
      },
    });
    sim.fault({ key: BAD_KEY }, 401);
    for (let i = 0; i < 3; i++) {
      const res = await tg.post('/chat/completions', { model: 'guarded', messages: [{ role: 'user', content: 'Hi' }] });
      assert.equal(res.status, 200, res.text);
    }
    // Refused on one model the key only rests; once rested, refused on a second model it is disabled.
    clock.advance(60_001);
    const other = await tg.post('/chat/completions', { model: 'pooled/gpt-4o', messages: [{ role: 'user', content: 'Hi' }] });
    assert.equal(other.status, 200, other.text);
    ({ browser, page, problems } = await openBrowserPage({ width: 1366, height: 768 }));
  });

  after(async () => {
    await browser?.close();
    await tg?.close();
    await sim?.close();
  });

  test('shows the open breaker and the disabled key, and enables the key', async () => {
    await signInToAdmin(page, tg.gateway.origin);
    await page.getByRole('link', { name: 'Upstream health' }).click();
    await page.getByRole('heading', { name: 'Upstream health' }).waitFor();

    const flaky = page.locator('tr[data-deployment="flaky/sim-500"]');
    await flaky.waitFor();
    assert.match(await flaky.innerText(), /open/);
    assert.match(await flaky.innerText(), /upstream_error \(500\)/);
    assert.match(await page.locator('tr[data-deployment="pooled/gpt-4o-mini"]').innerText(), /closed/);

    const keys = page.getByTestId('pool-keys');
    const bad = keys.locator('tr', { hasText: '…9999' });
    assert.match(await bad.innerText(), /disabled/);
    assert.ok(!(await page.content()).includes(BAD_KEY), 'the page never shows a key');
    await page.screenshot({ path: join(ARTIFACTS, '10-upstream-health.png'), fullPage: true });

    sim.fault({ key: BAD_KEY }, null);
    await bad.getByRole('button', { name: 'Enable' }).click();
    await page.getByText('Key …9999 of pooled is in use again.').waitFor();
    await keys.locator('tr', { hasText: '…9999' }).getByText('ok', { exact: true }).waitFor();
    assert.deepEqual(problems, []);
  });
});
