/**
 * Rewriting the texts of a request or an answer with one function (a guardrail that redacts), without
 * touching anything else: copy on write, so an object nothing changed in is returned as it came, and
 * a body the client sent is never mutated. The canonical shapes are mapped here; each dialect maps
 * its own body with the same helpers (`Dialect.mapRequestText`, `mapAnswerText`).
 *
 * What counts as text: what a person or a tool wrote, in message contents, text parts, system prompts
 * and instructions, tool results; never ids, tool names, tool-call arguments (JSON a tool parses) or
 * opaque blocks (thinking signatures, images).
 */
import type { ChatCompletion, ChatCompletionRequest, ChatMessage } from './chat-types.ts';
import type { CanonicalRequest } from './canonical-request.ts';

/** The function applied to each text. */
export type TextMap = (text: string) => string;

/** `value` with `key` set to `next`, a copy when it changes. */
export function withField<T extends object>(value: T, key: string, next: unknown): T {
  return (value as Record<string, unknown>)[key] === next ? value : Object.assign({}, value, { [key]: next });
}

/** Maps an array's items, returning the same array when none changed. */
export function mapItems<T>(items: readonly T[], fn: (item: T) => T): T[] {
  let out: T[] | null = null;
  for (let i = 0; i < items.length; i++) {
    const next = fn(items[i]!);
    if (next !== items[i] && out === null) out = items.slice(0, i);
    if (out !== null) out.push(next);
  }
  return out ?? (items as T[]);
}

/**
 * A content value that is a string or an array of parts: the string mapped, or each part whose `type`
 * is in `textTypes` with its `text` mapped (`nested` maps other parts, e.g. a tool result's content).
 */
export function mapContent(content: unknown, fn: TextMap, textTypes: ReadonlySet<string>, nested?: (part: Record<string, unknown>) => Record<string, unknown>): unknown {
  if (typeof content === 'string') return fn(content);
  if (!Array.isArray(content)) return content;
  return mapItems(content as unknown[], (part) => {
    if (typeof part !== 'object' || part === null) return part;
    const block = part as Record<string, unknown>;
    if (typeof block.type === 'string' && textTypes.has(block.type) && typeof block.text === 'string') return withField(block, 'text', fn(block.text));
    return nested ? nested(block) : block;
  });
}

const CANONICAL_TEXT = new Set(['text']);

/** A canonical chat message with its content's texts and refusal mapped. */
function mapMessage(message: ChatMessage, fn: TextMap): ChatMessage {
  let out = withField(message, 'content', mapContent(message.content, fn, CANONICAL_TEXT));
  if (typeof message.refusal === 'string') out = withField(out, 'refusal', fn(message.refusal));
  return out;
}

/** A chat request with each message's texts mapped (any role). */
export function mapChatRequestText(request: ChatCompletionRequest, fn: TextMap): ChatCompletionRequest {
  return withField(request, 'messages', mapItems(request.messages, (message) => mapMessage(message, fn)));
}

/** A canonical request with every text mapped: each message's (any role), or an embeddings request's inputs. */
export function mapCanonicalRequestText(request: CanonicalRequest, fn: TextMap): CanonicalRequest {
  if ('messages' in request) return mapChatRequestText(request, fn);
  const embedding = request;
  const { input } = embedding;
  if (typeof input === 'string') return withField(embedding, 'input', fn(input));
  if (Array.isArray(input)) return withField(embedding, 'input', mapItems(input as unknown[], (item) => (typeof item === 'string' ? fn(item) : item)));
  return embedding;
}

/** A canonical answer with each choice's text mapped by `fn(text, choiceIndex)`. */
export function mapCompletionText(completion: ChatCompletion, fn: (text: string, choiceIndex: number) => string): ChatCompletion {
  return withField(completion, 'choices', mapItems(completion.choices, (choice) => withField(choice, 'message', mapMessage(choice.message, (text) => fn(text, choice.index)))));
}
