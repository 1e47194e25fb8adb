/**
 * Turns off V8's allocation-site pretenuring once the gateway serves requests.
 *
 * V8 allocates what an object literal creates straight in the old generation once, at some
 * scavenge, nearly all of that literal's objects are still alive, and the decision is final. Early
 * requests (beside the start-up's own work) tenured the request path's literals, so every request
 * then put a few objects in the old generation; those point at the request's young objects, which
 * therefore survive each scavenge (the old generation is not traced then) and are promoted. Node
 * 20, `--trace-gc-nvp`: 0.84 KiB promoted a request at 1 connection (a bare proxy: 0.07), 1.52 KiB
 * a stream at 50; with pretenuring off 0.07 and 0.36, and shorter scavenges (docs/performance.md).
 * Node 24 promoted for another reason as well: closures made per request, under its Maglev
 * compiler (`plugins/provider-router/routing/upstream-call-for.ts`).
 *
 * Not at process start: start-up's own data (the price table, caches) does live long, and with it
 * pretenured the start-up ends in the full GC after which V8's memory reducer gives the young
 * generation back at rest (off from the start, the idle RSS stayed ~110 MB instead of ~76 in 3 of 8
 * runs).
 */
import { setFlagsFromString } from 'node:v8';

/** Idempotent; V8 reads the flag when it weighs a scavenge's survivors, so it applies from the next one. */
export function stopPretenuring(): void {
  setFlagsFromString('--no-allocation-site-pretenuring');
}
