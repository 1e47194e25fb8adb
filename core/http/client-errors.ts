/**
 * Answers the requests Node's HTTP parser refuses before any handler runs (the server's
 * `clientError`): headers over Node's size limit (431 `request_headers_too_large`), a malformed
 * request line or headers (400 `malformed_http_request`), a request not received within the client
 * timeouts (408 `request_timeout`). Node's own answers to these have no body; the contract promises
 * a JSON error body and `x-request-id` on every response. The path is not parsed yet, so the body's
 * shape comes from the raw bytes Node kept: the dialect whose route the request line names (a 431 on
 * /api/v1/messages speaks Anthropic), or, for a body that stopped coming, the parsed request's path;
 * else OpenAI's. The connection is closed after the answer, as
 * Node does: the parser cannot resynchronize with the stream. Closed for good, not only our side of
 * it: node:http's sockets are half-open capable, so ending ours waits for the client's end, which a
 * client that never reads nor closes never sends; its socket then stayed counted against the
 * connection caps for ever (issue 39, item 4). It is destroyed `CLOSE_GRACE_MS` after the answer.
 */
import { STATUS_CODES, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { gatewayError, type ErrorCode } from '../errors.ts';
import { dialects, openAIErrorBody } from '../dialects/index.ts';

/**
 * How long the client has to read the answer and close, in ms, before its socket is destroyed.
 * Destroying at once could reset the connection before the answer's bytes reach the client (a close
 * with unread input sends RST, and the client may drop what it had not read yet).
 */
export const CLOSE_GRACE_MS = 1_000;

/** The catalog code for a `clientError`'s Node error code. */
function codeFor(nodeCode: string | undefined): ErrorCode {
  if (nodeCode === 'HPE_HEADER_OVERFLOW') return 'request_headers_too_large';
  if (nodeCode === 'ERR_HTTP_REQUEST_TIMEOUT') return 'request_timeout';
  return 'malformed_http_request';
}

/** The request path in the first line of `raw` (`POST /api/v1/messages?x HTTP/1.1`), without its query. */
function requestPath(raw: unknown): string | null {
  if (!Buffer.isBuffer(raw)) return null;
  const match = /^[A-Z]+ ([^\s?]+)/.exec(raw.subarray(0, 2048).toString('latin1'));
  return match ? match[1]! : null;
}

/** The path of a parsed request's URL (`/api/v1/messages?beta=true`), without its query. */
function pathOf(url: string | undefined): string | null {
  if (!url) return null;
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/**
 * Installs the handler on `server`. `newRequestId` names the answer (`x-request-id`); `onError`
 * sees each refusal (for the debug log).
 */
export function answerClientErrors(server: Server, newRequestId: () => string, onError?: (code: ErrorCode, err: Error) => void): void {
  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: unknown }, socket: Socket) => {
    // A response already under way on this socket cannot be followed by another one.
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const code = codeFor(err.code);
    onError?.(code, err);
    const error = gatewayError(code);
    // A request whose head was parsed (a body that stopped coming) has its path on the response Node
    // made for it; only the bytes after the head are left in `rawPacket` then.
    const path = requestPath(err.rawPacket) ?? pathOf(inFlight?.req?.url);
    const dialect = path ? dialects.find((d) => d.routes.some((r) => r.path === path)) : undefined;
    const body = JSON.stringify((dialect?.errorBody ?? openAIErrorBody)(error));
    const headers = Object.entries(Object.assign({}, error.headers, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'x-request-id': newRequestId(), connection: 'close' }))
      .map(([name, value]) => `${name}: ${value}\r\n`).join('');
    socket.end(`HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\n${headers}\r\n${body}`);
    const grace = setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
    socket.once('close', () => clearTimeout(grace));
  });
}
