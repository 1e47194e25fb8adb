/**
 * Writing complete (non-streamed) responses: JSON replies and contract error bodies. Every response
 * carries `x-request-id`; plugin headers from `ex.responseHeaders` are merged in.
 */
import type { ServerResponse, OutgoingHttpHeaders } from 'node:http';
import type { GatewayError } from '../errors.ts';

/** Writes `body` (serialized unless already a string) as `application/json` and ends the response. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  requestId: string,
  ...headerSets: Array<Record<string, string> | undefined>
): void {
  if (res.headersSent || res.destroyed) return;
  const payload = typeof body === 'string' ? body : JSON.stringify(body);
  const headers: OutgoingHttpHeaders = {};
  for (const set of headerSets) if (set) Object.assign(headers, set);
  headers['content-type'] = 'application/json';
  headers['content-length'] = Buffer.byteLength(payload);
  headers['x-request-id'] = requestId;
  res.writeHead(status, headers);
  res.end(payload);
}

/** Renders an error as a dialect's JSON body (OpenAI's `{"error":{...}}` unless told otherwise). */
export type ErrorBodyRenderer = (err: GatewayError) => unknown;

const openAIShape: ErrorBodyRenderer = (err) => err.toBody();

/** Writes an error with its status and headers, its body in the caller's dialect (default OpenAI's). */
export function sendError(
  res: ServerResponse, err: GatewayError, requestId: string, extraHeaders?: Record<string, string>, body: ErrorBodyRenderer = openAIShape,
): void {
  sendJson(res, err.status, err.relayedBody ?? body(err), requestId, extraHeaders, err.headers);
}
