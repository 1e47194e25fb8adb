/**
 * Hand-made exchanges, completions and chunks for the openai-responses rendering tests, as the proxy
 * would hand them to a renderer (usage observed before end()).
 */
import { openAIResponses } from '../../../core/dialects/openai-responses/index.ts';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionChunkChoice, ChatMessage, TokenCounts } from '../../../core/canonical/chat-types.ts';
import type { Exchange } from '../../../core/exchange.ts';

let ids = 0;
export function exchange(fields: Partial<Exchange> = {}): Exchange {
  return {
    id: `req_${++ids}`, operation: 'responses.create', method: 'POST', path: '/api/v1/responses',
    headers: {}, params: {}, query: {}, startedAtMs: 0, startedAtPerfMs: performance.now(), signal: new AbortController().signal,
    dialect: openAIResponses, request: null, clientBody: null, untranslatable: null, refusal: null, stream: false, clientWantsUsage: false, principal: null,
    target: { provider: 'openai', model: 'gpt-5-mini' }, modelServed: null,
    usage: null, usageEstimated: false, usageReport: null, promptTokensEstimate: null, generated: [], upstreamStatus: null,
    cost: null, status: 200, errorCode: null, firstByteAtPerfMs: null, clientAborted: false,
    responseHeaders: {}, logFields: null, states: [],
    ...fields,
  };
}

export const counts = (promptTokens: number, completionTokens: number, cachedTokens = 0, cacheWriteTokens = 0): TokenCounts =>
  ({ promptTokens, completionTokens, cachedTokens, cacheWriteTokens });

export function completion(message: Partial<ChatMessage>, finishReason: string | null): ChatCompletion {
  return {
    id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'gpt-5-mini-2025-08-07',
    choices: [{ index: 0, message: { role: 'assistant', content: null, ...message }, finish_reason: finishReason }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

export function chunk(delta: ChatCompletionChunkChoice['delta'], finishReason: string | null = null): ChatCompletionChunk {
  return { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'gpt-5-mini-2025-08-07', choices: [{ index: 0, delta, finish_reason: finishReason }] };
}

export const toolDelta = (index: number, args: string, id?: string, name?: string) =>
  chunk({ tool_calls: [{ index, ...(id ? { id, type: 'function' as const } : {}), function: { ...(name ? { name } : {}), arguments: args } }] });

/** SSE text → the events' data, checking that each `event:` matches its `data.type`. */
export function events(text: string): Array<Record<string, unknown> & { type: string; sequence_number: number }> {
  return text.split('\n\n').filter(Boolean).map((block) => {
    const match = /^event: ([\w.]+)\ndata: (.*)$/s.exec(block);
    if (!match) throw new Error(`not an SSE event: ${block}`);
    const data = JSON.parse(match[2]!);
    if (data.type !== match[1]) throw new Error(`event ${match[1]} carries type ${data.type}`);
    return data;
  });
}
