/**
 * `npm start` runs the esbuild bundle (dist/tollgate.js), not the sources: check that the bundle
 * bin/tollgate.js picks is fresh, starts, finds schema.sql, serves a completion and logs it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { startOpenAISimulator, SIM_REPLY } from '../helpers/openai-simulator.ts';
import { startGatewayProcess } from '../helpers/gateway-process.ts';
import { cliJson } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';

test('the bundled gateway (what npm start runs) serves a completion', async () => {
  const bundle = fileURLToPath(new URL('../../dist/tollgate.js', import.meta.url));
  assert.ok(statSync(bundle).size > 10_000, 'npm test builds dist/tollgate.js first (pretest)');
  const sim = await startOpenAISimulator();
  const dataDir = tempDir();
  await cliJson(['users', 'create', '--name', 'bundle'], { dataDir, env: { TOLLGATE_FROM_SOURCE: '0' } });
  const { key } = await cliJson<{ key: string }>(['keys', 'create', '--user', 'bundle'], { dataDir, env: { TOLLGATE_FROM_SOURCE: '0' } });
  const gateway = await startGatewayProcess({ dataDir, env: { TOLLGATE_FROM_SOURCE: '0', OPENAI_BASE_URL: sim.baseUrl, OPENAI_API_KEY: 'sk-test' } });
  try {
    assert.match(gateway.output(), /Running: +bundle dist\/tollgate\.js/);
    const client = new OpenAI({ apiKey: key, baseURL: gateway.baseURL, maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(completion.choices[0]!.message.content, SIM_REPLY);
  } finally {
    assert.equal(await gateway.stop(), 0);
    await sim.close();
  }
});
