/**
 * `tollgate teams`: the real CLI against a real data dir: create with a budget and limits, add members
 * (shown with their names), update, remove a member, delete; errors exit 1 naming the problem; every
 * write leaves one audit row.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openTestStore } from '../helpers/test-store.ts';
import { cliJson, runCli } from '../helpers/cli.ts';
import { tempDir } from '../helpers/tmp.ts';

const dataDir = tempDir();

async function auditActions(): Promise<string[]> {
  const store = await openTestStore(dataDir);
  try {
    return (await store.db.selectFrom('audit_log').select('action').where('object_type', '=', 'team').orderBy('id').execute()).map((r) => r.action);
  } finally {
    await store.close();
  }
}

interface TeamJson {
  id: number;
  name: string;
  budget_limit_usd: number | null;
  budget_period: string;
  rpm: number | null;
  tpm: number | null;
  max_concurrent: number | null;
  models: string[] | null;
  member_ids: number[];
  members?: Array<{ id: number; name: string }>;
}

test('teams: create, add-member, show with members, update, remove-member, delete; each write audited', async () => {
  const ada = await cliJson<{ id: number }>(['users', 'create', '--name', 'ada'], { dataDir });
  const bob = await cliJson<{ id: number }>(['users', 'create', '--name', 'bob'], { dataDir });

  const created = await cliJson<TeamJson>(['teams', 'create', '--name', 'search', '--budget', '25', '--period', 'weekly', '--rpm', '60', '--models', 'openai/*,claude-*'], { dataDir });
  assert.equal(created.name, 'search');
  assert.equal(created.budget_limit_usd, 25);
  assert.equal(created.budget_period, 'weekly');
  assert.equal(created.rpm, 60);
  assert.deepEqual(created.models, ['openai/*', 'claude-*']);
  assert.deepEqual(created.member_ids, []);

  const added = await cliJson<TeamJson>(['teams', 'add-member', 'search', 'ada'], { dataDir });
  assert.deepEqual(added.member_ids, [ada.id]);
  const human = await runCli(['teams', 'add-member', String(created.id), String(bob.id)], { dataDir });
  assert.equal(human.code, 0, human.stderr);
  assert.match(human.stdout, /Added gateway user \d+ \("bob"\) to team "search"/);

  const shown = await cliJson<TeamJson>(['teams', 'show', 'search'], { dataDir });
  assert.deepEqual(shown.member_ids, [ada.id, bob.id]);
  assert.deepEqual(shown.members, [{ id: ada.id, name: 'ada' }, { id: bob.id, name: 'bob' }]);

  const updated = await cliJson<TeamJson>(['teams', 'update', 'search', '--budget', 'none', '--tpm', '5000', '--max-concurrent', '4', '--models', 'all', '--name', 'search-eu'], { dataDir });
  assert.equal(updated.name, 'search-eu');
  assert.equal(updated.budget_limit_usd, null);
  assert.equal(updated.tpm, 5000);
  assert.equal(updated.max_concurrent, 4);
  assert.equal(updated.models, null);
  assert.equal(updated.rpm, 60, 'fields not passed stay');

  const removed = await cliJson<TeamJson>(['teams', 'remove-member', 'search-eu', 'bob'], { dataDir });
  assert.deepEqual(removed.member_ids, [ada.id]);
  const notMember = await runCli(['teams', 'remove-member', 'search-eu', 'bob'], { dataDir });
  assert.equal(notMember.code, 1);
  assert.match(notMember.stderr, /"bob" is not a member of team "search-eu"/);

  const list = await cliJson<TeamJson[]>(['teams', 'list'], { dataDir });
  assert.deepEqual(list.map((t) => t.name), ['search-eu']);

  const dup = await runCli(['teams', 'create', '--name', 'search-eu'], { dataDir });
  assert.equal(dup.code, 1);
  assert.match(dup.stderr, /a team named "search-eu" already exists/);
  const nothing = await runCli(['teams', 'update', 'search-eu'], { dataDir });
  assert.equal(nothing.code, 1);
  assert.match(nothing.stderr, /nothing to update/);

  assert.deepEqual(await cliJson(['teams', 'delete', 'search-eu'], { dataDir }), { id: created.id, deleted: true });
  assert.deepEqual(await cliJson(['teams', 'list'], { dataDir }), []);
  const missing = await runCli(['teams', 'show', 'search-eu'], { dataDir });
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /no team "search-eu"/);
  // The members stay, without a team.
  const adaNow = await cliJson<{ id: number }>(['users', 'show', 'ada'], { dataDir });
  assert.equal(adaNow.id, ada.id);

  assert.deepEqual(await auditActions(), ['teams.create', 'teams.add_member', 'teams.add_member', 'teams.update', 'teams.remove_member', 'teams.delete']);
});
