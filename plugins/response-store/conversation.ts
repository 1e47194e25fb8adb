/**
 * Stored responses as conversation items: what a request's own input is stored as, and how a chain of
 * stored responses becomes the input of a continuation (`previous_response_id`).
 *
 * Sources: openai-node `src/resources/responses/responses.ts` (`ResponseInputItem`, `EasyInputMessage`,
 * `ResponseOutputMessage`, `ResponseFunctionToolCall`, `ResponseReasoningItem`),
 * https://platform.openai.com/docs/guides/conversation-state (a continuation sees every earlier
 * input and output, but not the earlier `instructions`).
 *
 * - Input items are stored as the client sent them, normalized: a string input is one user message;
 *   a message without `type` gets `type: "message"`; a message's string content becomes one text part
 *   (`input_text`, or `output_text` for an assistant). Ids are not invented here (see `input-items.ts`):
 *   an id the gateway made up, replayed to OpenAI, would name an item OpenAI does not have.
 * - Output items replayed as input: a `message` → an assistant message with its `output_text` (and
 *   `refusal`) parts; a `function_call` → `{type, call_id, name, arguments[, namespace]}`; both without
 *   the output's id and status, as Codex replays them. A `reasoning` item is replayed only when the
 *   upstream itself produced it (native pass-through: OpenAI's own, possibly encrypted); the gateway's
 *   rendering of another upstream's reasoning means nothing to any upstream and is dropped. Any other
 *   output item (built-in tool calls) comes from a native upstream and is replayed as it is.
 * - An `item_reference` (`{type: "item_reference", id}`, which the Vercel AI SDK sends for each item of
 *   an earlier stored response) is replaced by that stored output item, replayed as above.
 */

/** One Responses item as JSON (input or output); only `type` is read generically. */
export type Item = Record<string, unknown>;

/** A request's `input` (string or items) as the normalized items stored for it. */
export function normalizeInput(input: unknown): Item[] {
  if (typeof input === 'string') return [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }];
  if (!Array.isArray(input)) return [];
  return input.map((raw: unknown) => normalizeItem(raw as Item));
}

function normalizeItem(item: Item): Item {
  const isMessage = item.type === undefined || item.type === 'message';
  if (!isMessage) return item;
  const content = typeof item.content === 'string'
    ? [{ type: item.role === 'assistant' ? 'output_text' : 'input_text', text: item.content }]
    : item.content;
  return Object.assign({}, item, { type: 'message', content });
}

/** One stored response as the chain expansion reads it. */
export interface StoredTurn {
  /** The normalized input items of its request. */
  inputItems: Item[];
  /** `output` of its final response object. */
  output: Item[];
  /** True when the upstream produced the output itself (native pass-through). */
  servedNatively: boolean;
}

/** The input items that continue `turns` (oldest first), followed by the new request's own `input`. */
export function conversationInput(turns: readonly StoredTurn[], ownInput: Item[]): Item[] {
  const items: Item[] = [];
  for (const turn of turns) {
    items.push(...turn.inputItems);
    for (const output of turn.output) {
      const replayed = replayOutput(output, turn.servedNatively);
      if (replayed) items.push(replayed);
    }
  }
  items.push(...ownInput);
  return items;
}

/** An output item as the input item that replays it; null when it is not replayed. */
export function replayOutput(item: Item, servedNatively: boolean): Item | null {
  switch (item.type) {
    case 'message': {
      const parts = Array.isArray(item.content) ? (item.content as Item[]) : [];
      return { type: 'message', role: 'assistant', content: parts.map(replayPart) };
    }
    case 'function_call': {
      const call: Item = { type: 'function_call', call_id: item.call_id, name: item.name, arguments: item.arguments };
      if (typeof item.namespace === 'string') call.namespace = item.namespace;
      return call;
    }
    default:
      // Reasoning and built-in tool calls mean something only to the upstream that produced them.
      return servedNatively ? item : null;
  }
}

/** An output content part as an assistant input part: its text, without annotations and logprobs. */
function replayPart(part: Item): Item {
  if (part.type === 'output_text') return { type: 'output_text', text: part.text };
  if (part.type === 'refusal') return { type: 'refusal', refusal: part.refusal };
  return part;
}
