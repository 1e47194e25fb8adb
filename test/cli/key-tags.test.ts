/**
 * `tollgate keys create --tag` and `tollgate keys tag`: tags stored as canonical JSON on the key (the
 * form the request path copies onto log rows), listed, replaced, cleared, and bad ones refused.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openTestStore } from '../helpers/test-store.ts';
import { cliJson, runCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';

const dataDir = tempDir();

async function storedTags(id: number): Promise<string | null> {
  const store = await openTestStore(dataDir);
  try {
    return (await store.db.selectFrom('api_keys').select('tags').where('id', '=', id).executeTakeFirstOrThrow()).tags;
  } finally {
    await store.close();
  }
}

test('keys create --tag stores the tags sorted; keys tag replaces and --clear removes them; bad tags exit 1 naming the rule', async () => {
  await cliJson(['users', 'create', '--name', 'tagger'], { dataDir });
  const created = await cliJson<{ id: number; tags: Record<string, string> }>(
    ['keys', 'create', '--user', 'tagger', '--tag', 'project=search', '--tag', 'cost-center=42'], { dataDir });
  assert.deepEqual(created.tags, { 'cost-center': '42', project: 'search' });
  assert.equal(await storedTags(created.id), '{"cost-center":"42","project":"search"}');

  const table = await runCli(['keys', 'list', '--user', 'tagger'], { dataDir });
  assert.match(table.stdout, /cost-center=42,project=search/);

  assert.deepEqual(await cliJson(['keys', 'tag', String(created.id), 'project=ads'], { dataDir }), { id: created.id, tags: { project: 'ads' } });
  assert.equal(await storedTags(created.id), '{"project":"ads"}');
  const listed = await cliJson<Array<{ id: number; tags: unknown }>>(['keys', 'list', '--user', 'tagger'], { dataDir });
  assert.deepEqual(listed.find((k) => k.id === created.id)!.tags, { project: 'ads' });

  const cleared = await runCli(['keys', 'tag', String(created.id), '--clear'], { dataDir });
  assert.equal(cleared.code, 0, cleared.stderr);
  assert.match(cleared.stdout, /has no tags now/);
  assert.equal(await storedTags(created.id), null);

  const bad = await runCli(['keys', 'create', '--user', 'tagger', '--tag', 'Project=x'], { dataDir });
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /Tag name "Project" must be 1–40 lowercase letters/);
  const noValue = await runCli(['keys', 'tag', String(created.id), 'project'], { dataDir });
  assert.equal(noValue.code, 1);
  assert.match(noValue.stderr, /must be name=value/);
  const unknown = await runCli(['keys', 'tag', '999', 'a=b'], { dataDir });
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /no API key with id 999/);
});
