/**
 * The model pricing table (`model_pricing`): its row shapes, validation, reads and writes, shared by
 * the CLI (`tollgate pricing`), the admin API and the pricing plugin's price book. Prices are USD per
 * million tokens. Three sources: `manual` (an admin or `pricing set`), `import` (the dataset or a
 * file; an import never overwrites a manual row) and `free` (never stored: the price book's zero price
 * for a provider configured as free).
 *
 * After writing from inside the gateway process, call the price book's `invalidate()`: another
 * process's writes are noticed by `store.onExternalChange`, this connection's are not.
 */
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, ModelPricingTable } from '../store/db-types.ts';
import { lockForWrite, nowIso, prepareQuery, type Store } from '../store/store.ts';
import { MAX_USD_PER_MILLION, usdPerMillionProblem } from './price-bounds.ts';

/** One model's price, as stored in `model_pricing` (USD per million tokens). */
export interface ModelPrice {
  model: string;
  provider: string | null;
  input_price_per_million: number;
  output_price_per_million: number;
  /** Cache reads; null = billed at the input rate. */
  cached_input_price_per_million: number | null;
  /** Cache writes (Anthropic charges 1.25× input); null = billed at the input rate. */
  cache_write_price_per_million: number | null;
  /** `manual` (admin or `pricing set`, always wins), `import` (the dataset), `free` (a provider declared free). */
  source: 'manual' | 'import' | 'free';
}

/** Just the `ModelPrice` fields of a stored row (or of any object carrying them), e.g. without `updated_at`. */
export function toModelPrice(row: ModelPrice): ModelPrice {
  return {
    model: row.model,
    provider: row.provider,
    input_price_per_million: row.input_price_per_million,
    output_price_per_million: row.output_price_per_million,
    cached_input_price_per_million: row.cached_input_price_per_million,
    cache_write_price_per_million: row.cache_write_price_per_million,
    source: row.source,
  };
}

/** One stored row. */
export type StoredPrice = Selectable<ModelPricingTable> & { source: 'manual' | 'import' };

/** What a caller gives to set or import a price (USD per million tokens). */
export interface PriceInput {
  model: string;
  /** Gateway provider id the price applies to; null/absent = any provider serving `model`. */
  provider?: string | null;
  input_price_per_million: number;
  output_price_per_million: number;
  /** Cache reads; null/absent = billed at the input rate. */
  cached_input_price_per_million?: number | null;
  /** Cache writes; null/absent = billed at the input rate. */
  cache_write_price_per_million?: number | null;
}

/** A price that cannot be stored; `message` says which field and why, for people. */
export class PriceValidationError extends Error {
  constructor(message: string, readonly field: string) {
    super(message);
    this.name = 'PriceValidationError';
  }
}

const PROVIDER_ID = /^[a-z0-9][a-z0-9._-]*$/;
const MAX_MODEL_LENGTH = 300;
const REQUIRED_PRICES = ['input_price_per_million', 'output_price_per_million'] as const;
const OPTIONAL_PRICES = ['cached_input_price_per_million', 'cache_write_price_per_million'] as const;

function checkPrice(row: Record<string, unknown>, field: string, required: boolean): number | null {
  const value = row[field];
  if (value === undefined || value === null) {
    if (required) throw new PriceValidationError(`${field} is required: a price in USD per million tokens, e.g. 0.15`, field);
    return null;
  }
  const got = JSON.stringify(value) ?? String(value);
  if (typeof value === 'number' && Number.isFinite(value) && value > MAX_USD_PER_MILLION) {
    throw new PriceValidationError(`${field} must be at most ${MAX_USD_PER_MILLION} USD per million tokens, got ${got}`, field);
  }
  if (usdPerMillionProblem(value) !== null) {
    throw new PriceValidationError(`${field} must be a non-negative number of USD per million tokens, got ${got}`, field);
  }
  return value as number;
}

/**
 * Checks an untrusted row (JSON file, admin API body) and returns it normalized.
 * @throws PriceValidationError naming the first bad field.
 */
export function validatePrice(input: unknown): Required<PriceInput> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new PriceValidationError('a price must be an object with model, input_price_per_million and output_price_per_million', 'model');
  }
  const row = input as Record<string, unknown>;
  const model = typeof row.model === 'string' ? row.model.trim() : '';
  if (!model) throw new PriceValidationError('model is required: a model id such as "gpt-4o-mini" or "anthropic/claude-sonnet-4-5"', 'model');
  if (model.length > MAX_MODEL_LENGTH) throw new PriceValidationError(`model is longer than ${MAX_MODEL_LENGTH} characters`, 'model');
  const provider = row.provider ?? null;
  if (provider !== null && (typeof provider !== 'string' || !PROVIDER_ID.test(provider))) {
    throw new PriceValidationError(`provider must be a provider id such as "openai" (lowercase letters, digits, ".", "_", "-"), got ${JSON.stringify(provider)}`, 'provider');
  }
  const [input_price_per_million, output_price_per_million] = REQUIRED_PRICES.map((f) => checkPrice(row, f, true)!) as [number, number];
  const [cached_input_price_per_million, cache_write_price_per_million] = OPTIONAL_PRICES.map((f) => checkPrice(row, f, false));
  return {
    model, provider, input_price_per_million, output_price_per_million,
    cached_input_price_per_million: cached_input_price_per_million ?? null,
    cache_write_price_per_million: cache_write_price_per_million ?? null,
  };
}

/** Every stored price, sorted by model (rows without a model never appear). */
export async function listPrices(db: Kysely<Database>): Promise<StoredPrice[]> {
  return await db.selectFrom('model_pricing').selectAll().where('model', 'is not', null).orderBy('model').execute();
}

/**
 * Stored prices whose model or provider contains `text` (case-insensitive for ASCII, as SQLite's
 * LIKE; `%` and `_` in `text` match themselves), sorted by model. Empty `text` = every price.
 */
export async function searchPrices(db: Kysely<Database>, text: string): Promise<StoredPrice[]> {
  if (text === '') return listPrices(db);
  const pattern = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return (await db.selectFrom('model_pricing').selectAll()
    .where('model', 'is not', null)
    .where((eb) => eb.or([
      // lower() on both sides: PostgreSQL's LIKE is case-sensitive, SQLite's is not (for ASCII; so is lower() under COLLATE "C").
      sql<boolean>`lower(${eb.ref('model')}) LIKE lower(${pattern}) ESCAPE '\\'`,
      sql<boolean>`lower(${eb.ref('provider')}) LIKE lower(${pattern}) ESCAPE '\\'`,
    ]))
    .orderBy('model').execute());
}

/**
 * The same as `listPrices`, for the price book: synchronous on SQLite (a better-sqlite3 prepared
 * statement: the book loads on a request's first lookup), a Promise on PostgreSQL.
 */
export function createPriceReader(store: Store): () => StoredPrice[] | Promise<StoredPrice[]> {
  const query = store.db.selectFrom('model_pricing').selectAll().where('model', 'is not', null).orderBy('model');
  if (store.engine === 'postgres') return async () => await query.execute();
  const statement = prepareQuery(store.sqlite, query);
  return () => statement.all();
}

/** One stored price by exact model id, or null. */
export async function getPrice(db: Kysely<Database>, model: string): Promise<StoredPrice | null> {
  const row = await db.selectFrom('model_pricing').selectAll().where('model', '=', model).executeTakeFirst();
  return row ?? null;
}

/**
 * Creates or replaces the price of `input.model` as a `manual` row (manual prices always win over
 * imported ones). Absent optional fields are stored as null. Returns the stored row.
 * @throws PriceValidationError when a field is invalid.
 */
export async function setPrice(db: Kysely<Database>, input: PriceInput, nowMs?: number): Promise<StoredPrice> {
  const row = { ...validatePrice(input), source: 'manual' as const, updated_at: nowIso(nowMs) };
  const { model: _model, ...changes } = row;
  await db.insertInto('model_pricing').values(row).onConflict((oc) => oc.column('model').doUpdateSet(changes)).execute();
  return row;
}

/** Deletes the price of `model`; false when there was none. */
export async function deletePrice(db: Kysely<Database>, model: string): Promise<boolean> {
  const result = await db.deleteFrom('model_pricing').where('model', '=', model).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** 8 columns × 100 rows stays far below SQLite's bound-parameter limit. */
const INSERT_CHUNK_ROWS = 100;

function validOrNull(input: unknown): Required<PriceInput> | null {
  try {
    return validatePrice(input);
  } catch (err) {
    if (err instanceof PriceValidationError) return null;
    throw err;
  }
}

export interface ImportResult {
  /** Rows that were new. */
  inserted: number;
  /** Imported rows replaced with the new figures. */
  updated: number;
  /** Rows left alone because an admin set that model's price by hand. */
  skippedManual: number;
  /** Rows without a model, or with a price outside 0..`MAX_USD_PER_MILLION` (`price-bounds.ts`). */
  skippedInvalid: number;
}

/**
 * Upserts `rows` as `import` rows in one transaction. A model whose stored row is `manual` is never
 * touched; rows with a null/empty model or a bad price are skipped and counted, not fatal (datasets
 * and legacy tables contain them). A later row for the same model replaces an earlier one.
 */
export async function importPrices(db: Kysely<Database>, rows: ReadonlyArray<unknown>, nowMs?: number): Promise<ImportResult> {
  const result: ImportResult = { inserted: 0, updated: 0, skippedManual: 0, skippedInvalid: 0 };
  const updatedAt = nowIso(nowMs);
  await db.transaction().execute(async (trx) => {
    // A CLI import beside a running gateway: see lockForWrite.
    await lockForWrite(trx, 'model_pricing');
    const existing = new Map((await trx.selectFrom('model_pricing').select(['model', 'source']).execute()).map((r) => [r.model, r.source]));
    const inserts = new Map<string, StoredPrice>();
    for (const input of rows) {
      const price = validOrNull(input);
      if (!price) {
        result.skippedInvalid++;
        continue;
      }
      const source = existing.get(price.model);
      if (source === 'manual') {
        result.skippedManual++;
        continue;
      }
      const row: StoredPrice = { ...price, source: 'import', updated_at: updatedAt };
      if (source === undefined) {
        if (!inserts.has(price.model)) result.inserted++;
        inserts.set(price.model, row);
      } else {
        await trx.updateTable('model_pricing').set(row).where('model', '=', price.model).execute();
        result.updated++;
      }
    }
    // New rows go in a few multi-row statements: the first-start seed is ~1,000 rows. A row another
    // replica inserted meanwhile (replicas seeding a new database together) is left as it is.
    const values = [...inserts.values()];
    for (let i = 0; i < values.length; i += INSERT_CHUNK_ROWS) {
      await trx.insertInto('model_pricing').values(values.slice(i, i + INSERT_CHUNK_ROWS)).onConflict((oc) => oc.column('model').doNothing()).execute();
    }
  });
  return result;
}
