/**
 * The child process of `datasetPricesApart` (`price-dataset.ts`): loads the price dataset, turns it
 * into rows, sends them back over IPC and exits, so the ~1,000-model dataset (its 1.6 MB module
 * source and ~10 MB of objects) never stays in the gateway's memory after a first-start seed or an
 * admin import. Receives one `DatasetChildRequest`; answers one `DatasetChildAnswer`.
 */
import { datasetPrices, type DatasetChildAnswer, type DatasetChildRequest } from './price-dataset.ts';

process.once('message', (message) => {
  const { providers, nowMs } = message as DatasetChildRequest;
  // Fire and forget: a failure becomes the answer; the parent is told by the answer or by this process's exit.
  void datasetPrices(providers, nowMs).then(
    (answer): DatasetChildAnswer => answer,
    (err: unknown): DatasetChildAnswer => ({ error: err instanceof Error ? err.message : String(err) }),
  ).then((answer) => {
    // Exit once the answer is out: the IPC channel is the only thing left holding the process.
    process.send!(answer, () => process.disconnect());
  });
});
