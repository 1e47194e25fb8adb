/**
 * The `responses` table (schema.sql version 7), its `response_items` (version 10) and their bounds
 * (version 15: each row's `size_bytes`, each item's own JSON, the per-user `response_totals` kept by
 * triggers): one row per stored response, keyed by its owner and the id the client saw. Every read
 * names the owner, so another user's id reads as missing; rows past `expires_at` read as missing too,
 * before the sweep removes them.
 *
 * Two implementations of one contract, chosen once by the store's engine: SQLite runs prepared
 * statements synchronously (`store-sqlite.ts`; the write sits before every stored answer's last bytes,
 * and Kysely's executor costs several times the statement there), PostgreSQL runs Kysely queries
 * (`store-postgres.ts`); `createResponseTable` (`index.ts`) picks one.
 */
import type { ResponsesTable } from '../../core/store/db-types.ts';
import type { Item } from './conversation.ts';

/** A stored response as the plugin reads it (JSON columns parsed). */
export interface StoredResponse {
  id: string;
  model: string;
  provider: string;
  servedNatively: boolean;
  previousResponseId: string | null;
  inputItems: Item[];
  /** The final response object, as the client received it. */
  response: Record<string, unknown>;
}

/** What is written for one response. */
export interface NewStoredResponse extends StoredResponse {
  gatewayUserId: number;
  createdAtMs: number;
  expiresAtMs: number;
}

/**
 * An output item an `item_reference` names, with what the expansion needs of its response. The item
 * stays JSON text: its size is checked before anything is parsed.
 */
export interface StoredItem {
  itemId: string;
  /** The item's JSON, as its response's `output` held it. */
  json: string;
  /** The response holding it. */
  responseId: string;
  provider: string;
  servedNatively: boolean;
}

/** A user's stored responses (or everyone's), as `response_totals` counts them. */
export interface StoreTotals {
  responseCount: number;
  /** UTF-8 bytes, as `size_bytes` counts them. */
  bytes: number;
}

/** Per-user bounds an insert keeps to by deleting that user's oldest responses first. */
export interface StoreQuota {
  maxResponses: number;
  maxBytes: number;
}

/** How far `chain` reads. */
export interface ChainLimits {
  /** Most turns read. */
  maxDepth: number;
  /** Most stored bytes (`size_bytes`, summed) read; the turn that passes it is not parsed. */
  maxBytes: number;
}

/** What `chain` read. */
export interface ChainRead {
  /** Newest first. */
  turns: StoredResponse[];
  /** True when the chain goes on past `ChainLimits.maxBytes` (`turns` then stops before that turn). */
  overBytes: boolean;
}

/** The table's operations; each rejects with the database's error (the connection failed, ...). */
export interface ResponseTable {
  /** The caller's unexpired response `id`, or null. */
  find(gatewayUserId: number, id: string, nowMs: number): Promise<StoredResponse | null>;
  /**
   * The caller's unexpired response `id` and the turns it continues, newest first: at most
   * `limits.maxDepth` rows and `limits.maxBytes` stored bytes; ends before the first ancestor that is
   * missing, expired or already in the chain (an upstream that repeats ids). Empty when `id` itself
   * is not stored.
   */
  chain(gatewayUserId: number, id: string, nowMs: number, limits: ChainLimits): Promise<ChainRead>;
  /** The caller's unexpired output items among `itemIds` (distinct), by item id; missing ids are absent. */
  findItems(gatewayUserId: number, itemIds: readonly string[], nowMs: number): Promise<Map<string, StoredItem>>;
  /**
   * Writes a response and its output items, together; an id the same user already has is replaced,
   * with its items (an upstream that repeats ids). With `quota`, the user's oldest responses are
   * deleted first, in the same transaction, until the new one fits (never the new one itself).
   * Resolves to false, having written and deleted nothing, when `quota` is given and the response
   * alone is larger than its `maxBytes` (`tooLargeAlone`): deleting all the user's responses would
   * still not make it fit.
   */
  insert(row: NewStoredResponse, quota?: StoreQuota | null): Promise<boolean>;
  /** Deletes the caller's unexpired response `id` (and its items); false when there was none. */
  remove(gatewayUserId: number, id: string, nowMs: number): Promise<boolean>;
  /** Deletes at most `limit` rows expired at `nowMs`; resolves to how many it deleted. */
  sweepBatch(nowMs: number, limit: number): Promise<number>;
  /** Deletes the caller's responses expired at `nowMs` (not swept yet); resolves to how many. */
  removeExpiredOf(gatewayUserId: number, nowMs: number): Promise<number>;
  /** The caller's stored responses and bytes, expired ones not swept yet included. */
  totalsOf(gatewayUserId: number): Promise<StoreTotals>;
  /** Every user's, summed: the store's size. */
  totals(): Promise<StoreTotals>;
}

/** The columns a read selects. */
export type ResponseRow = Pick<ResponsesTable, 'id' | 'model' | 'provider' | 'served_natively' | 'previous_response_id' | 'input_items' | 'response'>;

/** A row as the plugin reads it (JSON columns parsed). */
export function parseResponseRow(row: ResponseRow): StoredResponse {
  return {
    id: row.id, model: row.model, provider: row.provider, servedNatively: Number(row.served_natively) === 1,
    previousResponseId: row.previous_response_id,
    inputItems: JSON.parse(row.input_items) as Item[],
    response: JSON.parse(row.response) as Record<string, unknown>,
  };
}

/** A response as its columns hold it, with its size. */
export interface SerializedResponse {
  inputItems: string;
  response: string;
  /** `[item id, item JSON]` of each distinct non-empty string id of its output, first occurrence kept. */
  items: Array<[string, string]>;
  /** UTF-8 bytes of the three above: what `size_bytes` and the quota count. */
  sizeBytes: number;
}

/** Serializes what `insert` writes for `row`. */
export function serializeResponse(row: NewStoredResponse): SerializedResponse {
  const inputItems = JSON.stringify(row.inputItems);
  const response = JSON.stringify(row.response);
  let sizeBytes = Buffer.byteLength(inputItems) + Buffer.byteLength(response);
  const items: Array<[string, string]> = [];
  const seen = new Set<string>();
  const output = Array.isArray(row.response.output) ? (row.response.output as unknown[]) : [];
  for (const item of output) {
    const id = (item as { id?: unknown } | null)?.id;
    if (typeof id !== 'string' || id === '' || seen.has(id)) continue;
    seen.add(id);
    const json = JSON.stringify(item);
    sizeBytes += Buffer.byteLength(json);
    items.push([id, json]);
  }
  return { inputItems, response, items, sizeBytes };
}

/** True when one response of `sizeBytes` exceeds `quota` on its own, with nothing else stored. */
export function tooLargeAlone(sizeBytes: number, quota: StoreQuota): boolean {
  return overQuota({ responseCount: 0, bytes: 0 }, sizeBytes, quota);
}

/** True while `used` plus one response of `sizeBytes` exceeds `quota`. */
export function overQuota(used: StoreTotals, sizeBytes: number, quota: StoreQuota): boolean {
  return used.responseCount + 1 > quota.maxResponses || used.bytes + sizeBytes > quota.maxBytes;
}
