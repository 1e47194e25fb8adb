/**
 * The router's first attempt (`plugins/provider-router/routing/fallback-plan.ts` `firstAttempt`): the first
 * deployment that can take the request serves it, with the plan for the next ones attached; it stays
 * synchronous while the builds are (the common case: a `provider/model` target with cached
 * credentials), so the pipeline spends no promise on routing; a build that returns a promise makes
 * the result one; when no deployment can take the request, the first one's error answers.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { firstAttempt, type AttemptDeps, type AttemptState } from '../../plugins/provider-router/routing/fallback-plan.ts';
import { createDeploymentPicker, type Deployment } from '../../plugins/provider-router/routing/model-groups.ts';
import type { Exchange } from '../../core/exchange.ts';
import type { ModelCall } from '../../core/upstream/upstream-call.ts';
import type { MaybePromise } from '../../core/runtime/maybe-promise.ts';

const deployments: Deployment[] = ['a/m', 'b/m', 'c/m'].map((target) => ({ target, weight: 1, apiKey: null }));
const ex = {} as Exchange;

function setup(build: (deployment: Deployment) => MaybePromise<ModelCall>) {
  const built: string[] = [];
  const state: AttemptState = { release: null };
  const deps: AttemptDeps = {
    picker: createDeploymentPicker(),
    retry: { maxAttempts: 3, retriesPerDeployment: 0, deadlineMs: 60_000, backoffMs: 0, maxBackoffMs: 0, maxRetryAfterMs: 0, retryOnStatus: [502] },
    retryOnStatus: new Set([502]),
    build: (deployment) => {
      built.push(deployment.target);
      return build(deployment);
    },
    settle: () => false,
    sleep: async () => {},
  };
  return { built, state, deps };
}

const callFor = (deployment: Deployment) => ({ provider: deployment.target }) as unknown as ModelCall;
const refused = (deployment: Deployment) => new Error(`${deployment.target} cannot take it`);

describe('the router\'s first attempt', () => {
  test('synchronous builds give the call itself, not a promise, counted in flight and with its plan', () => {
    const { built, state, deps } = setup(callFor);
    const call = firstAttempt(ex, deployments, state, deps);
    assert.equal(call instanceof Promise, false);
    assert.equal((call as ModelCall).provider, 'a/m');
    assert.deepEqual((call as ModelCall).fallback!.targets.map((t) => `${t.provider}/${t.model}`), ['b/m', 'c/m']);
    assert.deepEqual(built, ['a/m']);
    assert.equal(typeof state.release, 'function');
  });

  test('the plan\'s later targets carry the model their price is looked up by, when a provider names one', () => {
    const { state, deps } = setup(callFor);
    deps.priceModelOf = (provider, model) => (provider === 'b' ? 'gpt-4o-mini' : model);
    const call = firstAttempt(ex, deployments, state, deps) as ModelCall;
    assert.deepEqual(call.fallback!.targets, [{ provider: 'b', model: 'm', priceModel: 'gpt-4o-mini' }, { provider: 'c', model: 'm' }]);
  });

  test('a deployment that throws is skipped, still synchronously; when all throw, the first error is thrown', () => {
    const { built, state, deps } = setup((d) => {
      if (d.target !== 'c/m') throw refused(d);
      return callFor(d);
    });
    const call = firstAttempt(ex, deployments, state, deps);
    assert.equal(call instanceof Promise, false);
    assert.equal((call as ModelCall).provider, 'c/m');
    assert.deepEqual(built, ['a/m', 'b/m', 'c/m']);

    const none = setup((d) => {
      throw refused(d);
    });
    assert.throws(() => firstAttempt(ex, deployments, none.state, none.deps), /^Error: a\/m cannot take it$/);
    assert.equal(none.state.release, null);
  });

  test('a build that returns a promise makes the result one; a rejection moves on, the first error answers', async () => {
    const { built, state, deps } = setup(async (d) => {
      if (d.target === 'a/m') throw refused(d);
      return callFor(d);
    });
    const pending = firstAttempt(ex, deployments, state, deps);
    assert.ok(pending instanceof Promise);
    assert.equal((await pending).provider, 'b/m');
    assert.deepEqual(built, ['a/m', 'b/m']);

    // Mixed: the first throws synchronously, the second rejects, the third is asynchronous and fails too.
    const none = setup((d) => {
      if (d.target === 'a/m') throw refused(d);
      return Promise.reject(refused(d));
    });
    await assert.rejects(Promise.resolve(firstAttempt(ex, deployments, none.state, none.deps)), /^Error: a\/m cannot take it$/);
    assert.deepEqual(none.built, ['a/m', 'b/m', 'c/m']);
  });
});
