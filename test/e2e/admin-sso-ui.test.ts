/**
 * Admin single sign-on in real headless Chromium (as admin-ui.test.ts: Debian's chromium driven by
 * playwright-core) against a real OpenID provider (`oidc-provider` on loopback): with password login
 * turned off the sign-in page shows only "Sign in with <provider>", the browser goes through the
 * provider's own login page and lands on the dashboard signed in as an admin; signing out leaves for
 * the provider's end-session page. No page of the gateway may log a console error.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { startTestGateway, type TestGateway } from '../helpers/test-gateway.ts';
import { startOidcProvider, type TestOidcProvider } from '../helpers/oidc-provider.ts';

const CHROMIUM = process.env.TOLLGATE_CHROMIUM || ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => existsSync(path)) || '/usr/bin/chromium';
const HAVE_CHROMIUM = existsSync(CHROMIUM);
const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'admin-sso-ui');
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const SECRET = 'tollgate e2e client secret';

describe('admin single sign-on in Chromium', { skip: HAVE_CHROMIUM ? false : 'Chromium is not installed' }, () => {
  let sim: OpenAISimulator;
  let provider: TestOidcProvider;
  let tg: TestGateway;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    sim = await startOpenAISimulator();
    provider = await startOidcProvider({ ada: { email: 'ada@corp.example', name: 'Ada', groups: ['tollgate-admins'] } });
    tg = await startTestGateway({
      providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-shared' } },
      admin: { oidc: { issuer: provider.issuer, name: 'Corp IdP', clientId: 'tollgate-admin', clientSecretEnv: 'OIDC_SECRET', allowedDomains: ['corp.example'], roleMapping: { admin: ['tollgate-admins'] }, passwordLogin: false } },
      env: { OIDC_SECRET: SECRET },
    });
    const origin = tg.gateway.origin;
    provider.setClients([{ client_id: 'tollgate-admin', client_secret: SECRET, redirect_uris: [`${origin}/admin/api/oidc/callback`], post_logout_redirect_uris: [`${origin}/admin/`] }]);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    page = await (await browser.newContext({ viewport: { width: 1366, height: 768 } })).newPage();
    page.setDefaultTimeout(15_000);
    // The provider's development pages load a web font (no network here): only the gateway's pages count.
    page.on('console', (message) => {
      if (!message.location().url.startsWith(origin)) return;
      if (message.type() === 'error' || message.type() === 'warning') problems.push(`console.${message.type()}: ${message.text()}`);
    });
    page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`));
  });

  after(async () => {
    await browser?.close();
    await tg?.close();
    await provider?.close();
    await sim?.close();
  });

  test('signs in through the provider\'s login page and lands on the dashboard; sign-out goes to the provider', async () => {
    const origin = tg.gateway.origin;
    await page.goto(`${origin}/admin/`);
    const ssoButton = page.getByRole('link', { name: 'Sign in with Corp IdP' });
    await ssoButton.waitFor();
    assert.equal(await page.getByLabel('Password').count(), 0, 'the password form is hidden when password login is off');
    await page.screenshot({ path: join(ARTIFACTS, 'sign-in.png'), fullPage: true });
    await ssoButton.click();

    await page.waitForURL((url) => url.href.startsWith(provider.issuer));
    await page.locator('input[name="login"]').fill('ada');
    await page.locator('input[name="password"]').fill('any password');
    await page.screenshot({ path: join(ARTIFACTS, 'provider-login.png'), fullPage: true });
    await page.getByRole('button', { name: 'Sign-in' }).click();

    await page.waitForURL(`${origin}/admin/**`);
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await page.getByTestId('stat-requests').waitFor();
    assert.match(await page.locator('.sidebar, aside').first().innerText(), /ada@corp\.example/);
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard.png'), fullPage: true });

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((url) => url.href.startsWith(`${provider.issuer}/session/end`));
    const me = await fetch(`${origin}/admin/api/me`, { headers: { cookie: (await page.context().cookies(origin)).map((c) => `${c.name}=${c.value}`).join('; ') } });
    assert.equal(me.status, 401, 'the gateway session ended');
    assert.deepEqual(problems, []);
  });
});
