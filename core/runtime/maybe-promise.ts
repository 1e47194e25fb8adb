/**
 * Values that are ready now or later. The in-process limiters and ledgers answer at once, the shared
 * ones (Redis, PostgreSQL) with promises; a hook that chains them with `then` stays synchronous on
 * the first, so the pipeline (which awaits only real promises) spends no promise or microtask on it.
 */

/** A value now, or later. */
export type MaybePromise<T> = T | Promise<T>;

/**
 * Runs `next` on `value` at once when it is not a promise, else when it resolves. An error thrown by
 * `next` is thrown to the caller in the first case and rejects the result in the second.
 */
export function then<T, U>(value: MaybePromise<T>, next: (resolved: T) => MaybePromise<U>): MaybePromise<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}

/**
 * Runs `run`, and on its failure (a throw or a rejection) `cleanup`, which is awaited before the
 * error is passed on. Synchronous as long as `run` and `cleanup` are.
 */
export function onFailure(run: () => MaybePromise<void>, cleanup: () => MaybePromise<void>): MaybePromise<void> {
  const rethrow = (err: unknown) => then(cleanup(), () => {
    throw err;
  });
  let result: MaybePromise<void>;
  try {
    result = run();
  } catch (err) {
    return rethrow(err);
  }
  return result instanceof Promise ? result.catch(rethrow) : result;
}
