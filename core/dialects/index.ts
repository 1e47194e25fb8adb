/**
 * The dialects the gateway serves, in one explicit list (no directory scanning). A new dialect is a
 * folder beside `openai-chat/` and one entry here; nothing else in the core changes.
 */
import type { Dialect } from './dialect.ts';
import { openAIChat } from './openai-chat/index.ts';

export type { Dialect, ParsedRequest, ResponseRenderer } from './dialect.ts';
export { openAIErrorBody } from './openai-chat/index.ts';

export const dialects: readonly Dialect[] = [openAIChat];

/** Operations served by a dialect (model calls), as opposed to plugin-declared endpoints. */
const modelOperations: ReadonlySet<string> = new Set(dialects.flatMap((d) => d.routes.map((r) => r.operation)));

/**
 * True when `operation` is a call to a model (any dialect's), i.e. something a provider answers and
 * that may be billed, counted against token limits and priced.
 */
export function isModelOperation(operation: string): boolean {
  return modelOperations.has(operation);
}
