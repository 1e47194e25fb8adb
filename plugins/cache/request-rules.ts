/**
 * Which requests the cache may answer and which answers it may keep: the rules that are not about
 * storage, kept apart so that the hooks read as the cache's flow.
 */
import type { ChatCompletion, Exchange } from '../../core/sdk/index.ts';

/** What the client's headers ask of the cache. */
export type ClientDirective = 'use' | 'refresh' | 'bypass';

/** The values of a header, lowercase, split at commas (`cache-control: no-cache, max-age=0`). */
function tokensOf(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  const joined = Array.isArray(value) ? value.join(',') : value;
  return joined.split(',').map((token) => token.trim().toLowerCase());
}

/**
 * `bypass` (neither read nor kept) for `x-tollgate-cache: bypass` or `cache-control: no-store`;
 * `refresh` (not read, the fresh answer kept) for `cache-control: no-cache`, as HTTP caches read it;
 * `use` otherwise.
 */
export function clientDirective(ex: Exchange): ClientDirective {
  if (tokensOf(ex.headers['x-tollgate-cache']).includes('bypass')) return 'bypass';
  const control = tokensOf(ex.headers['cache-control']);
  if (control.includes('no-store')) return 'bypass';
  return control.includes('no-cache') ? 'refresh' : 'use';
}

/**
 * Whether the request's answer is meant to be repeatable: temperature 0, or any temperature when the
 * operator said so. No temperature counts as sampling: OpenAI's and Anthropic's default is 1, and
 * a cache must not freeze one sample of a question the caller expects varied answers to.
 */
export function deterministicEnough(ex: Exchange, cacheNonZeroTemperature: boolean): boolean {
  if (cacheNonZeroTemperature) return true;
  const temperature = (ex.request as { temperature?: unknown } | null)?.temperature;
  return temperature === 0;
}

/**
 * `finish_reason`s of an answer that ended by itself (the canonical vocabulary is OpenAI's: a
 * Messages API `end_turn` or `tool_use` arrives as `stop` or `tool_calls`). `length` (cut at the
 * output cap, which a budget may have lowered for this request alone) and `content_filter` are not
 * answers to give again.
 */
const COMPLETE_FINISH_REASONS = new Set(['stop', 'tool_calls', 'function_call']);

/** Whether every choice of `answer` ended normally. */
export function completeAnswer(answer: ChatCompletion): boolean {
  return answer.choices.length > 0 && answer.choices.every((choice) => COMPLETE_FINISH_REASONS.has(choice.finish_reason ?? ''));
}
