/**
 * The exchanges in flight, for the shutdown: how many there are (the drain waits for none) and each
 * one's cancellation (the drain timeout cuts them). A doubly linked list through the cancellations
 * themselves, not a `Set`.
 *
 * Why: a long-lived `Set` or `Map` with an entry added and deleted per request fills with deleted
 * entries and is rehashed every few dozen requests, into a new table V8 allocates in the old
 * generation (where the collection lives). Each table left behind still points at what it held, and
 * what an old object points at survives every scavenge (the old generation is not traced then), so
 * the cancellations and what they point at were promoted: ~75 bytes of old-generation garbage a
 * request here, which only a full collection frees (peak RSS, issue 17; the history's eleventh round).
 */
import type { ExchangeAbort } from './exchange-abort.ts';

export class RunningExchanges {
  #head: ExchangeAbort | null = null;
  #size = 0;

  /** Exchanges in flight. */
  get size(): number {
    return this.#size;
  }

  /** Whether `cancellation` is in the list: it has a previous one, or it is the first. */
  #has(cancellation: ExchangeAbort): boolean {
    return cancellation.previousRunning !== null || this.#head === cancellation;
  }

  add(cancellation: ExchangeAbort): void {
    if (this.#has(cancellation)) return;
    cancellation.nextRunning = this.#head;
    cancellation.previousRunning = null;
    if (this.#head) this.#head.previousRunning = cancellation;
    this.#head = cancellation;
    this.#size++;
  }

  /** Removes `cancellation`; one that is not in the list is left alone. */
  delete(cancellation: ExchangeAbort): void {
    if (!this.#has(cancellation)) return;
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
