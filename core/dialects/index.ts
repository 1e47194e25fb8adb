/**
 * The dialects the gateway serves, in one explicit list (no directory scanning). A new dialect is a
 * folder beside `openai-chat/` and one entry here; nothing else in the core changes.
 */
import type { Dialect } from './dialect.ts';
import { MODELS_RETRIEVE } from '../routes.ts';
import { openAIChat } from './openai-chat/index.ts';
import { anthropicMessages } from './anthropic-messages/index.ts';
import { openAIResponses } from './openai-responses/index.ts';
import { openAIEmbeddings } from './openai-embeddings/index.ts';
import { gemini } from './gemini/index.ts';

export type { Dialect, ParsedRequest, ResponseRenderer } from './dialect.ts';
export { openAIErrorBody } from './openai-chat/index.ts';

export const dialects: readonly Dialect[] = [openAIChat, anthropicMessages, openAIResponses, openAIEmbeddings, gemini];

const operationsOf = (kind: 'model-call' | 'token-count'): ReadonlySet<string> =>
  new Set(dialects.flatMap((d) => d.routes.filter((r) => (r.kind ?? 'model-call') === kind).map((r) => r.operation)));
/** Operations that call a model (every dialect's), as opposed to token counts and plugin endpoints. */
const modelOperations = operationsOf('model-call');
const tokenCountOperations = operationsOf('token-count');

/**
 * True when `operation` is a call to a model (any dialect's), i.e. something a provider answers and
 * that may be billed, counted against token limits and priced.
 */
export function isModelOperation(operation: string): boolean {
  return modelOperations.has(operation);
}

/** True when `operation` counts a request's prompt tokens (Anthropic's `count_tokens`). */
export function isTokenCountOperation(operation: string): boolean {
  return tokenCountOperations.has(operation);
}

/**
 * True when `operation` is not a model call but is limited and logged like one, at no cost (issue 39
 * item 6): every token count (an upstream call on a native route, else a local count of a body of up
 * to 32 MiB) and `models.retrieve` (a catalog read that may ask an upstream). The rate-limit plugin
 * applies its request limits (rpm) and concurrency to them, not its token limits; the budget charges
 * nothing (an over-budget user may still count tokens); the logger writes their row with cost 0.
 */
export function isMeteredOperation(operation: string): boolean {
  return tokenCountOperations.has(operation) || operation === MODELS_RETRIEVE;
}
