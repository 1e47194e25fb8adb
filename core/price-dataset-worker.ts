/**
 * The worker thread of `datasetPricesApart` (`price-dataset.ts`): loads the price dataset, turns it
 * into rows and posts them back, then exits, so the ~1,000-model dataset (its 1.6 MB module source and
 * ~10 MB of objects) never stays in the gateway's heap after a first-start seed or an admin import.
 * Posts `{ rows, unknownProviders }`; a failure is a thrown error (the worker's `error` event).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { datasetPrices } from './price-dataset.ts';

/** What the parent passes in `workerData`. */
export interface DatasetWorkerData {
  providers: Record<string, string>;
  nowMs: number;
}

const { providers, nowMs } = workerData as DatasetWorkerData;
parentPort!.postMessage(await datasetPrices(providers, nowMs));
