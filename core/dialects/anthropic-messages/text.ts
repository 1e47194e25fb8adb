/**
 * The texts of a Messages request (`Dialect.mapRequestText`): `system` (a string or text blocks), each
 * message's content (a string, or blocks: `text`, and a `tool_result`'s own content). Thinking blocks,
 * tool calls' `input` and images are left as they are: a thinking block's signature covers its text.
 * Source: docs/provider-wire-formats.md §2.2.
 */
import { mapContent, mapItems, withField, type TextMap } from '../../canonical/text-map.ts';

const TEXT = new Set(['text']);

/** A block of a message's content: a tool result's own content mapped too. */
function mapBlock(block: Record<string, unknown>, fn: TextMap): Record<string, unknown> {
  return block.type === 'tool_result' ? withField(block, 'content', mapContent(block.content, fn, TEXT)) : block;
}

export function mapMessagesRequestText(body: Readonly<Record<string, unknown>>, fn: TextMap): Readonly<Record<string, unknown>> {
  let out = withField(body, 'system', mapContent(body.system, fn, TEXT));
  if (Array.isArray(body.messages)) {
    out = withField(out, 'messages', mapItems(body.messages as Record<string, unknown>[], (message) =>
      withField(message, 'content', mapContent(message.content, fn, TEXT, (block) => mapBlock(block, fn)))));
  }
  return out;
}
