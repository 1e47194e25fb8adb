/**
 * The request's messages and the answer as span attributes, only when the operator turned
 * `tracing.capturePrompts` on: `gen_ai.input.messages` and `gen_ai.output.messages`, JSON in the
 * conventions' shape (https://opentelemetry.io/docs/specs/semconv/gen-ai/gen-ai-spans/ "Recording
 * content on attributes"): `[{role, parts: [{type: "text", content}]}]`, the output's with its
 * `finish_reason`. Text only (images, files and audio are named by their type, never copied), and
 * at most `maxChars` characters of text per attribute, so one huge prompt cannot swell every span.
 */
import type { ChatCompletion, ChatMessage } from '../canonical/chat-types.ts';

interface Part {
  type: string;
  content?: string;
}

interface Message {
  role: string;
  parts: Part[];
  finish_reason?: string;
}

/** Text kept so far against the attribute's budget; a piece past it is cut and marked. */
class TextBudget {
  private leftChars: number;
  constructor(maxChars: number) {
    this.leftChars = maxChars;
  }
  get spent(): boolean {
    return this.leftChars <= 0;
  }
  take(text: string): string {
    if (text.length <= this.leftChars) {
      this.leftChars -= text.length;
      return text;
    }
    const kept = text.slice(0, Math.max(0, this.leftChars));
    this.leftChars = 0;
    return `${kept}…[truncated]`;
  }
}

function partsOf(message: ChatMessage, budget: TextBudget): Part[] {
  const parts: Part[] = [];
  const { content } = message;
  if (typeof content === 'string') parts.push({ type: 'text', content: budget.take(content) });
  else if (Array.isArray(content)) {
    for (const part of content) {
      if (part.type === 'text' && typeof part.text === 'string') parts.push({ type: 'text', content: budget.take(part.text) });
      else parts.push({ type: part.type });
    }
  }
  for (const call of message.tool_calls ?? []) parts.push({ type: 'tool_call', content: budget.take(`${call.function.name}(${call.function.arguments})`) });
  return parts;
}

/** `gen_ai.input.messages` of a chat request: its messages, text cut at `maxChars` in all. */
export function inputMessagesJson(messages: readonly ChatMessage[], maxChars: number): string {
  const budget = new TextBudget(maxChars);
  const out: Message[] = [];
  for (const message of messages) {
    if (budget.spent) break;
    out.push({ role: message.role, parts: partsOf(message, budget) });
  }
  return JSON.stringify(out);
}

/** `gen_ai.output.messages` of a whole answer: one message per choice, text cut at `maxChars` in all. */
export function outputMessagesJson(answer: ChatCompletion, maxChars: number): string {
  const budget = new TextBudget(maxChars);
  const out: Message[] = answer.choices.map((choice) => ({
    role: choice.message.role,
    parts: partsOf(choice.message, budget),
    finish_reason: choice.finish_reason ?? 'stop',
  }));
  return JSON.stringify(out);
}
