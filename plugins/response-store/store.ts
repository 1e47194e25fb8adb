/**
 * The `responses` table (schema.sql version 7) and its `response_items` (version 10): one row per
 * stored response, keyed by its owner and the id the client saw. Every read names the owner, so
 * another user's id reads as missing; rows past `expires_at` read as missing too, before the sweep
 * removes them.
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

/** The table's operations; each rejects with the database's error (the connection failed, ...). */
export interface ResponseTable {
  /** The caller's unexpired response `id`, or null. */
  find(gatewayUserId: number, id: string, nowMs: number): Promise<StoredResponse | null>;
  /**
   * The caller's unexpired response `id` and the turns it continues, newest first: at most
   * `maxDepth` rows; ends before the first ancestor that is missing, expired or already in the chain
   * (an upstream that repeats ids). Empty when `id` itself is not stored.
   */
  chain(gatewayUserId: number, id: string, nowMs: number, maxDepth: number): Promise<StoredResponse[]>;
  /** The caller's unexpired response holding the output item `itemId`, or null. */
  findByItem(gatewayUserId: number, itemId: string, nowMs: number): Promise<StoredResponse | null>;
  /**
   * Writes a response and the ids of its output items, together; an id the same user already has is
   * replaced, with its item ids (an upstream that repeats ids).
   */
  insert(row: NewStoredResponse): Promise<void>;
  /** Deletes the caller's unexpired response `id` (and its item ids); false when there was none. */
  remove(gatewayUserId: number, id: string, nowMs: number): Promise<boolean>;
  /** Deletes at most `limit` rows expired at `nowMs`; resolves to how many it deleted. */
  sweepBatch(nowMs: number, limit: number): Promise<number>;
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

/** The distinct non-empty string ids of a response object's output items, as `response_items` holds them. */
export function outputItemIds(response: Record<string, unknown>): string[] {
  const output = Array.isArray(response.output) ? (response.output as unknown[]) : [];
  const ids = output.map((item) => (item as { id?: unknown } | null)?.id).filter((id): id is string => typeof id === 'string' && id !== '');
  return [...new Set(ids)];
}

