/**
 * Prices for accounting tests, written into a data dir's database before the gateway starts (a
 * non-empty `model_pricing` also means the pricing plugin does not seed from the dataset).
 */
import { nowIso } from '../../core/store/store.ts';
import { tempDir } from './tmp.ts';
import { openTestStore } from './test-store.ts';

export interface TestPrice {
  model: string;
  provider?: string | null;
  input: number;
  output: number;
  cachedInput?: number | null;
  cacheWrite?: number | null;
}

/** A fresh data dir whose database holds `prices` (USD per million tokens, source `manual`). */
export async function dataDirWithPrices(prices: TestPrice[]): Promise<string> {
  const dataDir = tempDir();
  const store = await openTestStore(dataDir);
  try {
    for (const p of prices) {
      await store.db
        .insertInto('model_pricing')
        .values({
          model: p.model,
          provider: p.provider ?? null,
          input_price_per_million: p.input,
          output_price_per_million: p.output,
          cached_input_price_per_million: p.cachedInput ?? null,
          cache_write_price_per_million: p.cacheWrite ?? null,
          source: 'manual',
          updated_at: nowIso(),
        })
        .execute();
    }
  } finally {
    await store.close();
  }
  return dataDir;
}
