/**
 * A streamed answer as one canonical completion, and back: `createCompletionAssembler` joins canonical
 * stream chunks (OpenAI `chat.completion.chunk`s) into the `chat.completion` they make, for the
 * `onAnswer` hooks (a response cache keeps answers whole); `chunksOfCompletion` splits a completion
 * into the chunks a stream of it carries, for an answer a plugin gives locally to a streaming client.
 * The joining follows OpenAI's streaming rules: `delta.content` and `delta.refusal` append, tool calls
 * are joined by `index` (id, name and arguments append), the last `finish_reason` and usage win.
 */
import type { ChatCompletion, ChatCompletionChunk, ChatMessage, ChatToolCall } from './chat-types.ts';

/** Joins the chunks of one answer. */
export interface CompletionAssembler {
  add(chunk: ChatCompletionChunk): void;
  /** The answer the chunks so far make; null before the first chunk. */
  completion(): ChatCompletion | null;
}

interface ChoiceParts {
  role: ChatMessage['role'];
  content: string;
  refusal: string | null;
  toolCalls: ChatToolCall[];
  finishReason: string | null;
}

export function createCompletionAssembler(): CompletionAssembler {
  let head: Pick<ChatCompletion, 'id' | 'created' | 'model'> | null = null;
  let usage: ChatCompletion['usage'] = null;
  const choices: ChoiceParts[] = [];
  return {
    add(chunk) {
      head ??= { id: chunk.id, created: chunk.created, model: chunk.model };
      if (chunk.usage) usage = chunk.usage;
      for (const choice of chunk.choices) {
        const parts = (choices[choice.index] ??= { role: 'assistant', content: '', refusal: null, toolCalls: [], finishReason: null });
        const { delta } = choice;
        if (delta.role) parts.role = delta.role;
        if (typeof delta.content === 'string') parts.content += delta.content;
        if (typeof delta.refusal === 'string') parts.refusal = (parts.refusal ?? '') + delta.refusal;
        for (const call of delta.tool_calls ?? []) {
          const joined = (parts.toolCalls[call.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
          if (call.id) joined.id = call.id;
          if (call.function?.name) joined.function.name += call.function.name;
          if (call.function?.arguments) joined.function.arguments += call.function.arguments;
        }
        if (choice.finish_reason) parts.finishReason = choice.finish_reason;
      }
    },
    completion() {
      if (head === null) return null;
      return {
        id: head.id, object: 'chat.completion', created: head.created, model: head.model,
        choices: choices.map((parts, index) => {
          const message: ChatMessage = { role: parts.role, content: parts.content || (parts.toolCalls.length > 0 ? null : '') };
          if (parts.refusal !== null) message.refusal = parts.refusal;
          if (parts.toolCalls.length > 0) message.tool_calls = parts.toolCalls.filter((call) => call !== undefined);
          return { index, message, finish_reason: parts.finishReason };
        }),
        ...(usage ? { usage } : {}),
      };
    },
  };
}

/**
 * The chunks a stream of `completion` carries: per choice one with its role, text and tool calls, then
 * one with its `finish_reason`; then, when the completion has usage and `withUsage`, the usage-only
 * chunk (`choices: []`) OpenAI sends for `stream_options.include_usage`.
 */
export function chunksOfCompletion(completion: ChatCompletion, withUsage: boolean): ChatCompletionChunk[] {
  const chunkOf = (choices: ChatCompletionChunk['choices'], usage?: ChatCompletion['usage']): ChatCompletionChunk => {
    const chunk: ChatCompletionChunk = { id: completion.id, object: 'chat.completion.chunk', created: completion.created, model: completion.model, choices };
    if (usage) chunk.usage = usage;
    return chunk;
  };
  const chunks: ChatCompletionChunk[] = [];
  for (const choice of completion.choices) {
    const { message } = choice;
    const delta: ChatCompletionChunk['choices'][number]['delta'] = { role: message.role };
    const text = typeof message.content === 'string' ? message.content : (message.content ?? []).map((part) => (part.type === 'text' ? part.text : '')).join('');
    if (text) delta.content = text;
    if (typeof message.refusal === 'string') delta.refusal = message.refusal;
    if (message.tool_calls?.length) {
      delta.tool_calls = message.tool_calls.map((call, index) => ({ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: call.function.arguments } }));
    }
    chunks.push(chunkOf([{ index: choice.index, delta, finish_reason: null }]));
    chunks.push(chunkOf([{ index: choice.index, delta: {}, finish_reason: choice.finish_reason ?? 'stop' }]));
  }
  if (withUsage && completion.usage) chunks.push(chunkOf([], completion.usage));
  return chunks;
}
