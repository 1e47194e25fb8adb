/**
 * The queue timeout of the upstream pools (issue 14, item 9) and the deadline of non-streamed calls:
 * undici queues a request while every connection of its origin's pool (`upstream.connectionsPerOrigin`)
 * is busy, with no limit on the wait. A request still queued after `upstream.queueTimeoutMs` is
 * answered 503 `upstream_busy` (retry shortly) instead of waiting behind other users' long streams;
 * a non-streamed call still unanswered after `upstream.requestDeadlineMs` is answered 504. The
 * timing itself is in `upstream-client.ts` (shared `DeadlineList`s) and `upstream-dispatch.ts` (the wait
 * ends when undici starts the request on a connection, `onRequestStart`).
 */
import { gatewayError, type GatewayError } from '../errors.ts';

/** 503: a request waited longer than `queueTimeoutMs` for a connection to `provider`. */
export function upstreamBusy(provider: string, queueTimeoutMs: number): GatewayError {
  return gatewayError('upstream_busy', {
    message: `Every connection to upstream "${provider}" stayed busy for ${queueTimeoutMs} ms (upstream.queueTimeoutMs). Retry shortly.`,
  });
}

/** What aborts a non-streamed call that ran past `upstream.requestDeadlineMs` (`transportError` maps it to 504). */
export function deadlineReason(deadlineMs: number): DOMException {
  return new DOMException(`The upstream call ran past its ${deadlineMs} ms deadline.`, 'TimeoutError');
}
