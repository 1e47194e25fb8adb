/**
 * Timeouts of one fixed duration for many concurrent calls, on one timer (the upstream pool's queue
 * timeout, a non-streamed call's deadline). A `setTimeout` per call cost a timer object, its
 * insertion and its clearing on every request, and showed in the benchmark's profile; here a call
 * costs one list node. Entries of one duration expire in the order they were added, so the list is
 * a FIFO (a doubly linked list: a finished call leaves it in O(1)), and the one timer is armed for
 * its head.
 *
 * An entry expires no earlier than its duration and at most `slackMs` later (1 % of the duration,
 * 1 ms to 1 s): the timer is not re-armed more often than that under a steady stream of calls.
 */

/** One waiting entry; `remove` it when the call finished in time. */
export interface DeadlineEntry<T> {
  readonly owner: T;
  /** `performance.now()` time at which it expires, ms. */
  readonly dueMs: number;
}

interface Node<T> extends DeadlineEntry<T> {
  prev: Node<T> | null;
  next: Node<T> | null;
  linked: boolean;
}

export class DeadlineList<T> {
  readonly durationMs: number;
  readonly #onExpire: (owner: T) => void;
  readonly #slackMs: number;
  #head: Node<T> | null = null;
  #tail: Node<T> | null = null;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #firing = false;

  /** `durationMs` > 0; `onExpire` runs for each entry still listed when its time is up. */
  constructor(durationMs: number, onExpire: (owner: T) => void) {
    this.durationMs = durationMs;
    this.#onExpire = onExpire;
    this.#slackMs = Math.min(1_000, Math.max(1, durationMs / 100));
  }

  /** Starts `owner`'s timeout now. */
  add(owner: T): DeadlineEntry<T> {
    const node: Node<T> = { owner, dueMs: performance.now() + this.durationMs, prev: this.#tail, next: null, linked: true };
    if (this.#tail) this.#tail.next = node;
    else this.#head = node;
    this.#tail = node;
    if (this.#timer === null && !this.#firing) this.#arm(this.durationMs);
    return node;
  }

  /** Stops an entry's timeout (idempotent). The timer stays armed: it finds nothing and is not re-armed. */
  remove(entry: DeadlineEntry<T>): void {
    const node = entry as Node<T>;
    if (!node.linked) return;
    node.linked = false;
    if (node.prev) node.prev.next = node.next;
    else this.#head = node.next;
    if (node.next) node.next.prev = node.prev;
    else this.#tail = node.prev;
    node.prev = node.next = null;
  }

  #arm(ms: number): void {
    this.#timer = setTimeout(() => this.#fire(), ms);
    this.#timer.unref();
  }

  #fire(): void {
    this.#timer = null;
    const now = performance.now();
    // An expiry may start another call's timeout (a retry): the timer is armed once, below.
    this.#firing = true;
    try {
      for (let node = this.#head; node && node.dueMs <= now; node = this.#head) {
        this.remove(node);
        this.#onExpire(node.owner);
      }
    } finally {
      this.#firing = false;
    }
    if (this.#head) this.#arm(Math.max(this.#head.dueMs - now, this.#slackMs));
  }
}
