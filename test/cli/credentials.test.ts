/** `tollgate credentials`, `secret rotate` with TOLLGATE_SECRET, and `models sync|list`, as child processes. */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { cliJson, runCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';
import { startOpenAISimulator, type OpenAISimulator } from '../helpers/openai-simulator.ts';
import { openTestStore } from '../helpers/test-store.ts';
import { createCredentialReader } from '../../core/accounts/provider-credentials.ts';
import { createKeyring } from '../../core/accounts/secret-box.ts';

let sim: OpenAISimulator;
before(async () => (sim = await startOpenAISimulator({ models: ['gpt-4o-mini', 'o3'] })));
after(() => sim.close());

describe('credentials and the master key', () => {
  test('rotating a TOLLGATE_SECRET re-seals every credential under the new key', async () => {
    const dataDir = tempDir();
    const oldKey = randomBytes(32);
    const newKey = randomBytes(32);
    const user = await cliJson<{ id: number }>(['users', 'create', '--name', 'alice'], { dataDir });
    const env = { TOLLGATE_SECRET: oldKey.toString('base64') };
    await cliJson(['credentials', 'set', '--user', 'alice', '--provider', 'anthropic', '--api-key-stdin'], { dataDir, env, input: 'sk-ant-0123456789abcdef' });

    const noPrevious = await runCli(['secret', 'rotate'], { dataDir, env: { TOLLGATE_SECRET: newKey.toString('base64') } });
    assert.equal(noPrevious.code, 1, 'the old key is needed to open the records');
    assert.match(noPrevious.stderr, /does not hold/);

    const rotated = await cliJson<{ resealed: number; source: string }>(['secret', 'rotate'], {
      dataDir, env: { TOLLGATE_SECRET: newKey.toString('base64'), TOLLGATE_SECRET_PREVIOUS: oldKey.toString('base64') },
    });
    assert.deepEqual([rotated.resealed, rotated.source], [1, 'TOLLGATE_SECRET']);

    const store = await openTestStore(dataDir);
    try {
      const read = createCredentialReader(store);
      assert.equal((await read(user.id, createKeyring(newKey))).get('anthropic')!.apiKey, 'sk-ant-0123456789abcdef');
      await assert.rejects(async () => read(user.id, createKeyring(oldKey)), /does not hold/);
    } finally {
      await store.close();
    }
  });

  test('refuses an empty key, a bad provider id and a bad base URL', async () => {
    const dataDir = tempDir();
    await cliJson(['users', 'create', '--name', 'bob'], { dataDir });
    const empty = await runCli(['credentials', 'set', '--user', 'bob', '--provider', 'openai', '--api-key-stdin'], { dataDir, input: '\n' });
    assert.equal(empty.code, 1);
    assert.match(empty.stderr, /no API key on standard input/);
    const badProvider = await runCli(['credentials', 'set', '--user', 'bob', '--provider', 'Open AI', '--api-key-stdin'], { dataDir, input: 'k' });
    assert.match(badProvider.stderr, /--provider must be a provider id/);
    const badUrl = await runCli(['credentials', 'set', '--user', 'bob', '--provider', 'openai', '--api-key-stdin', '--base-url', 'ftp://x'], { dataDir, input: 'k' });
    assert.match(badUrl.stderr, /--base-url must be an http\(s\) URL/);
    assert.deepEqual(await cliJson(['credentials', 'list', '--user', 'bob'], { dataDir }), []);
  });
});

describe('tollgate models', () => {
  test('sync discovers each configured provider and list shows the stored catalog', async () => {
    const dataDir = tempDir();
    const env = { OPENAI_BASE_URL: sim.baseUrl, OPENAI_API_KEY: 'sk-sim', OLLAMA_BASE_URL: 'http://127.0.0.1:9', ANTHROPIC_API_KEY: '', GEMINI_API_KEY: '', MISTRAL_API_KEY: '' };
    const results = await cliJson<Array<{ provider: string; models: number | null; error: string | null }>>(['models', 'sync'], { dataDir, env });
    const byProvider = Object.fromEntries(results.map((r) => [r.provider, r]));
    assert.equal(byProvider.openai!.models, 2);
    assert.match(byProvider.anthropic!.error!, /no shared credential/);
    assert.match(byProvider.ollama!.error!, /ollama/);

    const list = await cliJson<Array<{ id: string; display_name: string }>>(['models', 'list'], { dataDir });
    assert.deepEqual(list.map((m) => [m.id, m.display_name]), [['openai/gpt-4o-mini', 'GPT 4o Mini'], ['openai/o3', 'O3']]);

    const unknown = await runCli(['models', 'sync', '--provider', 'nope'], { dataDir, env });
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no provider "nope" in the manifest \(known: openai, anthropic, gemini, mistral, ollama\)/);
  });
});
