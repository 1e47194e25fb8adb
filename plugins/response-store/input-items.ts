/**
 * `GET /api/v1/responses/{id}/input_items`: a stored response's own input items in OpenAI's cursor
 * list shape (`ResponseItemList`: `object: "list"`, `data`, `first_id`, `last_id`, `has_more`).
 *
 * Sources: openai-node `src/resources/responses/input-items.ts` (`InputItemListParams`: `limit`
 * 1..100, default 20; `order` `asc` | `desc`, default `desc`; `after`; the SDK pages with
 * `after` = the last id while `has_more`), https://platform.openai.com/docs/api-reference/responses/input-items
 * (`before` as well).
 *
 * Every item has an `id`: its own when the client sent one, else one derived from the response id
 * and the item's position (stable, so cursors work; never sent upstream, see `conversation.ts`). A
 * message item without a `status` reads as `completed`, as OpenAI lists them.
 */
import { createHash } from 'node:crypto';
import { invalidRequest } from '../../core/errors.ts';
import type { Item } from './conversation.ts';

/** The query of the route: `limit`, `order`, `after`, `before` (strings as sent). */
export type InputItemsQuery = Readonly<Record<string, string>>;

export interface InputItemList {
  object: 'list';
  data: Item[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

const PREFIX: Readonly<Record<string, string>> = { message: 'msg_', function_call: 'fc_', function_call_output: 'fco_', reasoning: 'rs_' };

/** The item at `index` of response `responseId`'s input, as listed. */
function listed(item: Item, index: number, responseId: string): Item {
  const id = typeof item.id === 'string' && item.id !== ''
    ? item.id
    : (PREFIX[String(item.type)] ?? 'item_') + createHash('sha256').update(`${responseId}:${index}`).digest('hex').slice(0, 24);
  const status = item.type === 'message' && item.status === undefined ? { status: 'completed' } : {};
  return { id, ...item, ...status };
}

function limitOf(query: InputItemsQuery): number {
  if (query.limit === undefined) return 20;
  const limit = Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw invalidRequest('Invalid value for "limit": an integer from 1 to 100.', 'limit');
  return limit;
}

/** Where the cursor `param` (`after` / `before`) points in `items`; 400 when no item has that id. */
function cursorAt(items: Item[], query: InputItemsQuery, param: 'after' | 'before'): number | null {
  const id = query[param];
  if (id === undefined || id === '') return null;
  const at = items.findIndex((item) => item.id === id);
  if (at === -1) throw invalidRequest(`Invalid value for "${param}": no input item of this response has the id '${id}'.`, param);
  return at;
}

/** One page of `inputItems` (normalized, oldest first) of response `responseId`. Throws 400 on a bad query. */
export function inputItemsPage(responseId: string, inputItems: readonly Item[], query: InputItemsQuery): InputItemList {
  const order = query.order ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw invalidRequest('Invalid value for "order": "asc" or "desc".', 'order');
  const limit = limitOf(query);
  const all = inputItems.map((item, i) => listed(item, i, responseId));
  if (order === 'desc') all.reverse();
  const after = cursorAt(all, query, 'after');
  const before = cursorAt(all, query, 'before');
  const window = all.slice(after === null ? 0 : after + 1, before === null ? all.length : before);
  // `before` alone pages backwards: the items just before the cursor, still in the requested order.
  const data = before !== null && after === null ? window.slice(Math.max(0, window.length - limit)) : window.slice(0, limit);
  return {
    object: 'list',
    data,
    first_id: (data[0]?.id as string | undefined) ?? null,
    last_id: (data.at(-1)?.id as string | undefined) ?? null,
    has_more: window.length > data.length,
  };
}
