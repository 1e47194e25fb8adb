/**
 * The per-request bookkeeping of long-lived collections adds and deletes nothing per request (a
 * long-lived `Map` or `Set` with an entry added and deleted per request is rehashed into tables V8
 * allocates in the old generation: garbage there every request). These tests hold each one to what
 * it still has to do: the right counts, a bounded size, and the shutdown's list of exchanges.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createInFlightCounter } from '../../../core/coordination/in-flight-counter.ts';
import { RunningExchanges } from '../../../core/http/running-exchanges.ts';
import { ExchangeAbort } from '../../../core/http/exchange-abort.ts';
import { createDeploymentPicker, type Deployment, type ModelGroup } from '../../../plugins/provider-router/routing/model-groups.ts';

describe('in-flight counter', () => {
  test('counts per caller; a caller back at zero is kept (no delete and re-add per request)', () => {
    const counter = createInFlightCounter();
    counter.take('user:1');
    counter.take('user:1');
    counter.take('key:2');
    assert.equal(counter.count('user:1'), 2);
    counter.release('user:1');
    counter.release('user:1');
    counter.release('user:1'); // one release too many never goes below zero
    assert.equal(counter.count('user:1'), 0);
    assert.equal(counter.size(), 2);
    counter.take('user:1');
    assert.equal(counter.count('user:1'), 1);
    counter.release('nobody');
    assert.equal(counter.count('nobody'), 0);
    assert.equal(counter.size(), 2);
  });

  test('callers at zero are swept once the map has doubled: memory stays bounded', () => {
    const counter = createInFlightCounter();
    for (let i = 0; i < 1023; i++) {
      counter.take(`user:${i}`);
      counter.release(`user:${i}`);
    }
    counter.take('user:busy');
    counter.take('user:busy');
    assert.equal(counter.size(), 1, 'the 1,024th caller swept the 1,023 at zero');
    assert.equal(counter.count('user:busy'), 2);
  });
});

describe('running exchanges', () => {
  test('adds, deletes in any order, counts, and lists what is in flight', () => {
    const running = new RunningExchanges();
    const [a, b, c] = [new ExchangeAbort(), new ExchangeAbort(), new ExchangeAbort()];
    running.add(a);
    running.add(b);
    running.add(c);
    running.add(b); // twice: still one entry
    assert.equal(running.size, 3);
    running.delete(b); // from the middle
    assert.deepEqual(running.list(), [c, a]);
    running.delete(b); // not in the list: nothing changes
    running.delete(c); // the head
    running.delete(a); // the last
    assert.equal(running.size, 0);
    assert.deepEqual(running.list(), []);
    running.add(a);
    assert.deepEqual(running.list(), [a]);
  });

  test('the shutdown can abort every listed exchange, even when an abort ends another meanwhile', () => {
    const running = new RunningExchanges();
    const all = Array.from({ length: 5 }, () => new ExchangeAbort());
    for (const c of all) running.add(c);
    // Aborting one removes the next from the list synchronously: the copy still reaches every one.
    for (const c of running.list()) {
      c.abort(new Error('shutdown'));
      running.delete(all[0]!);
    }
    assert.ok(all.every((c) => c.aborted));
  });
});

describe('deployment picker', () => {
  const deployment = (target: string): Deployment => ({ target, weight: 1, apiKey: null });

  test('counts the deployments of a balance group, which its order reads; zero stays zero', () => {
    const [a, b] = [deployment('openai/gpt-4o'), deployment('anthropic/claude-sonnet-4-5')];
    const group: ModelGroup = { name: 'smart', strategy: 'balance', deployments: [a, b] };
    const picker = createDeploymentPicker(() => 0);
    assert.deepEqual(picker.order(group), [a, b]);
    const endA = picker.begin(a);
    assert.equal(picker.inFlight(a), 1);
    assert.deepEqual(picker.order(group), [b, a], 'the one with a request in flight comes last');
    endA();
    endA(); // idempotent
    assert.equal(picker.inFlight(a), 0);
    assert.deepEqual(picker.order(group), [a, b]);
  });

  test('a deployment made for one request (a provider/model target) is not counted', () => {
    const picker = createDeploymentPicker();
    const adHoc = deployment('openai/gpt-4o-mini');
    const end = picker.begin(adHoc);
    assert.equal(picker.inFlight(adHoc), 0);
    end();
    assert.equal(picker.inFlight(adHoc), 0);
  });
});
