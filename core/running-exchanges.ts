/**
 * The exchanges in flight, for the shutdown: how many there are (the drain waits for none) and each
 * one's cancellation (the drain timeout cuts them). A doubly linked list through the cancellations
 * themselves, not a `Set`: a long-lived `Set` with an entry added and deleted per request fills with
 * deleted entries and is rehashed every few dozen requests, into a table V8 allocates in the old
 * generation (where the `Set` lives); each table left behind still points at the cancellations it
 * held, so the scavenges kept them, and what they point at, alive until they were promoted: ~70 bytes
 * of old-generation garbage a request, which only a full collection frees (peak RSS, issue 17).
 */
import type { ExchangeAbort } from './exchange-abort.ts';

export class RunningExchanges {
  #head: ExchangeAbort | null = null;
  #size = 0;

  /** Exchanges in flight. */
  get size(): number {
    return this.#size;
  }

  add(cancellation: ExchangeAbort): void {
    if (cancellation.running) return;
    cancellation.running = true;
    cancellation.nextRunning = this.#head;
    cancellation.previousRunning = null;
    if (this.#head) this.#head.previousRunning = cancellation;
    this.#head = cancellation;
    this.#size++;
  }

  /** Removes `cancellation`; one that is not in the list is left alone. */
  delete(cancellation: ExchangeAbort): void {
    if (!cancellation.running) return;
    cancellation.running = false;
    const { previousRunning: previous, nextRunning: next } = cancellation;
    if (previous) previous.nextRunning = next;
    else this.#head = next;
    if (next) next.previousRunning = previous;
    cancellation.previousRunning = null;
    cancellation.nextRunning = null;
    this.#size--;
  }

  /** The cancellations in flight now, newest first (a copy: aborting one may end others meanwhile). */
  list(): ExchangeAbort[] {
    const all: ExchangeAbort[] = [];
    for (let at = this.#head; at; at = at.nextRunning) all.push(at);
    return all;
  }
}
