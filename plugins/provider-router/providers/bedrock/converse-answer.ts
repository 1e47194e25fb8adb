/**
 * What Converse and ConverseStream answers share: the stop reason and the usage, in canonical terms
 * (`converse.ts` module doc). Sources: API_runtime_Converse.html (`stopReason`), API_runtime_TokenUsage.html.
 */
import type { Usage } from '../../../../core/canonical/chat-types.ts';
import { usageOf } from '../canonical.ts';

const FINISH_REASONS: Readonly<Record<string, string>> = {
  end_turn: 'stop', stop_sequence: 'stop', max_tokens: 'length', tool_use: 'tool_calls',
  guardrail_intervened: 'content_filter', content_filtered: 'content_filter', model_context_window_exceeded: 'length',
};

export function converseFinishReason(stopReason: unknown): string {
  return FINISH_REASONS[typeof stopReason === 'string' ? stopReason : ''] ?? 'stop';
}

export interface ConverseUsage { inputTokens?: number; outputTokens?: number; cacheReadInputTokens?: number; cacheWriteInputTokens?: number }

const count = (value: number | undefined) => (typeof value === 'number' && value > 0 ? value : 0);

/** Converse usage → canonical (module doc). */
export function usageFromConverse(usage: ConverseUsage): Usage {
  const read = count(usage.cacheReadInputTokens);
  const write = count(usage.cacheWriteInputTokens);
  return usageOf(count(usage.inputTokens) + read + write, count(usage.outputTokens), read, write);
}
