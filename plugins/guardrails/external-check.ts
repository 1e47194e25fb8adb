/**
 * The external check: an operator's HTTP endpoint that decides on a request's texts. It receives
 * `POST {"texts": [...], "direction": "input"}` (JSON) and answers 2xx `{"block": bool, "reason"?: string}`.
 * Anything else (no answer within `timeoutMs`, a refused connection, another status, a body without a
 * boolean `block`) is a failure, which the rule's `failMode` turns into a pass or a block.
 */
import type { ExternalConfig } from './schema.ts';

/**
 * What the check decided: `passed` and `blocked` are its answers; `timeout` and `error` are failures
 * (`failMode` decides).
 */
export type CheckOutcome = 'passed' | 'blocked' | 'timeout' | 'error';

/**
 * Asks the check about `texts`. Never rejects: every failure is an outcome.
 *
 * @param signal the request's (`ex.signal`): the call stops when the client leaves too.
 */
export async function runExternalCheck(config: ExternalConfig, texts: readonly string[], signal: AbortSignal): Promise<CheckOutcome> {
  const timeout = AbortSignal.timeout(config.timeoutMs);
  try {
    const res = await fetch(config.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...config.headers },
      body: JSON.stringify({ texts, direction: 'input' }),
      signal: AbortSignal.any([signal, timeout]),
    });
    if (!res.ok) {
      await res.body?.cancel();
      return 'error';
    }
    const answer = (await res.json()) as { block?: unknown } | null;
    if (typeof answer?.block !== 'boolean') return 'error';
    return answer.block ? 'blocked' : 'passed';
  } catch {
    // The check's own timer is the only abort that means "too slow"; the rest is a failure to reach it.
    return timeout.aborted ? 'timeout' : 'error';
  }
}
