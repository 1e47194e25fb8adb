/**
 * `item_reference` resolution, bounded (issue 39): a request names at most `maxItemReferences`
 * references (checked before the store is read); each distinct id is looked up once, as its item's
 * own JSON (`response_items.item`), never by parsing the response that holds it; the bytes of every
 * reference (an item named N times counts N times, as the expanded request carries it N times) are
 * checked against what is left of `maxExpandedBytes` before any item is parsed; each distinct item is
 * then parsed and replayed once, and every reference to it shares that one object.
 */
import { expansionTooLarge, invalidRequest } from '../../core/errors.ts';
import { replayOutput, type Item } from './conversation.ts';
import type { ResponseTable, StoredResponse } from './store.ts';

/** What a resolved reference says of the response holding its item. */
export type Holder = Pick<StoredResponse, 'provider' | 'servedNatively'>;

/** Bytes an expansion may still read (`maxExpandedBytes`, less what was read already). */
export interface ExpansionBudget {
  readonly maxBytes: number;
  leftBytes: number;
}

const isReference = (item: Item): boolean => item.type === 'item_reference';

/** The number of `item_reference` items of `items`; 400 when over `max`. */
export function checkReferenceCount(items: readonly Item[], max: number): number {
  let count = 0;
  for (const item of items) if (isReference(item)) count++;
  if (count > max) {
    throw invalidRequest(`"input" holds ${count} item_reference items; the gateway resolves at most ${max} per request. Send the items themselves, or continue with previous_response_id.`, 'input');
  }
  return count;
}

/**
 * `items` with each `item_reference` to an item this user's stored responses hold replaced by that
 * item (replayed as input), and the responses holding them. A reference the store does not know
 * stays: the dialect marks it for the user's own credential only (`ParsedRequest.ownCredentialOnly`),
 * and a translation refuses it. Throws 413 when the items come to more than `budget` has left.
 */
export async function resolveReferences(
  table: ResponseTable, items: Item[], userId: number, nowMs: number, budget: ExpansionBudget,
): Promise<{ items: Item[]; holders: Holder[] }> {
  const ids = new Set<string>();
  for (const item of items) if (isReference(item) && typeof item.id === 'string') ids.add(item.id);
  const found = await table.findItems(userId, [...ids], nowMs);
  if (found.size === 0) return { items, holders: [] };
  const bytesOf = new Map<string, number>();
  let bytes = 0;
  for (const item of items) {
    const stored = isReference(item) ? found.get(item.id as string) : undefined;
    if (!stored) continue;
    let size = bytesOf.get(stored.itemId);
    if (size === undefined) bytesOf.set(stored.itemId, (size = Buffer.byteLength(stored.json)));
    bytes += size;
    if (bytes > budget.leftBytes) throw expansionTooLarge(budget.maxBytes);
  }
  budget.leftBytes -= bytes;
  const replayed = new Map<string, Item | null>();
  const resolved: Item[] = [];
  for (const item of items) {
    const stored = isReference(item) ? found.get(item.id as string) : undefined;
    if (!stored) {
      resolved.push(item);
      continue;
    }
    let replay = replayed.get(stored.itemId);
    if (replay === undefined) replayed.set(stored.itemId, (replay = replayOutput(JSON.parse(stored.json) as Item, stored.servedNatively)));
    if (replay) resolved.push(replay);
  }
  return { items: resolved, holders: [...found.values()].map((stored) => ({ provider: stored.provider, servedNatively: stored.servedNatively })) };
}
