import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeadlineList } from '../../../core/upstream/deadline-list.ts';
import { sleep } from '../../helpers/sim-http.ts';

test('expires entries in the order they were added, no earlier than their duration', async () => {
  const expired: Array<{ name: string; lateMs: number }> = [];
  const list = new DeadlineList<{ name: string; dueMs: number }>(30, (owner) => expired.push({ name: owner.name, lateMs: performance.now() - owner.dueMs }));
  for (const name of ['a', 'b', 'c']) list.add({ name, dueMs: performance.now() + 30 });
  while (expired.length < 3) await sleep(5);
  assert.deepEqual(expired.map((e) => e.name), ['a', 'b', 'c']);
  for (const e of expired) assert.ok(e.lateMs >= -1, `${e.name} expired ${-e.lateMs} ms early`);
});

test('a removed entry never expires, and removing twice is harmless', async () => {
  const expired: string[] = [];
  const list = new DeadlineList<string>(20, (owner) => expired.push(owner));
  const first = list.add('removed');
  list.add('kept');
  list.remove(first);
  list.remove(first);
  while (expired.length < 1) await sleep(5);
  await sleep(40);
  assert.deepEqual(expired, ['kept']);
});

test('an entry added while others expire (a retry) still expires', async () => {
  const expired: string[] = [];
  const list: DeadlineList<string> = new DeadlineList<string>(15, (owner) => {
    expired.push(owner);
    if (owner === 'first') list.add('retry');
  });
  list.add('first');
  while (expired.length < 2) await sleep(5);
  assert.deepEqual(expired, ['first', 'retry']);
});

test('entries of a steady stream expire one by one as their time comes', async () => {
  const expired: number[] = [];
  const list = new DeadlineList<number>(25, (owner) => expired.push(owner));
  for (let i = 0; i < 5; i++) {
    list.add(i);
    await sleep(5);
  }
  while (expired.length < 5) await sleep(5);
  assert.deepEqual(expired, [0, 1, 2, 3, 4]);
});
