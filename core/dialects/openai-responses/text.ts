/**
 * The texts of a Responses request (`Dialect.mapRequestText`): `instructions`, `input` as a string, and
 * each input item's text: a message's content (a string, or `input_text` / `output_text` parts), a
 * `function_call_output`'s `output` (a string, or text parts). Function calls' arguments, reasoning
 * items (encrypted) and references are left as they are. Source: docs/provider-wire-formats.md §3.
 */
import { mapContent, mapItems, withField, type TextMap } from '../../canonical/text-map.ts';

const TEXT = new Set(['input_text', 'output_text', 'text']);

function mapItem(item: Record<string, unknown>, fn: TextMap): Record<string, unknown> {
  if (item.type === 'function_call_output') return withField(item, 'output', mapContent(item.output, fn, TEXT));
  if (item.type === 'message' || (item.type === undefined && 'role' in item)) return withField(item, 'content', mapContent(item.content, fn, TEXT));
  return item;
}

export function mapResponsesRequestText(body: Readonly<Record<string, unknown>>, fn: TextMap): Readonly<Record<string, unknown>> {
  let out = typeof body.instructions === 'string' ? withField(body, 'instructions', fn(body.instructions)) : body;
  const { input } = body;
  if (typeof input === 'string') out = withField(out, 'input', fn(input));
  else if (Array.isArray(input)) out = withField(out, 'input', mapItems(input as Record<string, unknown>[], (item) => (typeof item === 'object' && item !== null ? mapItem(item, fn) : item)));
  return out;
}
