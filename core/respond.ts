/**
 * Writing complete (non-streamed) responses: JSON replies and contract error bodies. Every response
 * carries `x-request-id`; plugin headers from `ex.responseHeaders` are merged in.
 */
import type { ServerResponse, OutgoingHttpHeaders } from 'node:http';
import type { GatewayError } from './errors.ts';

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

/** Writes a contract error body with its status and headers. */
export function sendError(res: ServerResponse, err: GatewayError, requestId: string, extraHeaders?: Record<string, string>): void {
  sendJson(res, err.status, err.toBody(), requestId, extraHeaders, err.headers);
}
