/**
 * The store's size in `GET /metrics`: `tollgate_stored_responses` and `tollgate_stored_responses_bytes`,
 * every user's together, read at each scrape from `response_totals` (one row per user, kept by
 * triggers: no scan of the responses). A failed read (the database is down) keeps the last value and
 * is logged, so the scrape still answers.
 */
import { Gauge } from 'prom-client';
import type { Log } from '../../core/runtime/log.ts';
import type { MetricsRegistry } from '../../core/runtime/metrics.ts';
import type { ResponseTable, StoreTotals } from './store.ts';

/** Registers the two gauges on `registry`, read from `table`. */
export function registerStoreGauges(registry: MetricsRegistry, table: ResponseTable, log: Log): void {
  const read = (): Promise<StoreTotals | null> => table.totals().catch((err: unknown) => {
    log.warn('stored responses totals unreadable', { err });
    return null;
  });
  new Gauge({
    name: 'tollgate_stored_responses',
    help: 'Responses kept by the response store (expired ones count until swept).',
    registers: [registry],
    async collect() {
      const totals = await read();
      if (totals) this.set(totals.responseCount);
    },
  });
  new Gauge({
    name: 'tollgate_stored_responses_bytes',
    help: 'Bytes the response store keeps: input items, response objects and output items, in UTF-8.',
    registers: [registry],
    async collect() {
      const totals = await read();
      if (totals) this.set(totals.bytes);
    },
  });
}
