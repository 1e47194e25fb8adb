/** What every upstream simulator does first with a request: read it whole and record it. */
import type { IncomingMessage, Server } from 'node:http';

/** A request as a simulator received it. */
export interface RecordedRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: Record<string, string>;
  headers: IncomingMessage['headers'];
  /** The JSON body; null when empty or not JSON (`malformed` tells which). */
  body: Record<string, unknown> | null;
  /** The body exactly as received (for byte-for-byte pass-through checks). */
  rawBody: string;
}

/** Reads `req` whole and parses its body as JSON. */
export async function readSimRequest(req: IncomingMessage): Promise<{ request: RecordedRequest; malformed: boolean }> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  const text = Buffer.concat(parts).toString('utf8');
  let body: Record<string, unknown> | null = null;
  let malformed = false;
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : null;
  } catch {
    malformed = true;
  }
  const url = new URL(req.url ?? '/', 'http://sim');
  const request = { method: req.method ?? 'GET', path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers, body, rawBody: text };
  return { request, malformed };
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Closes a simulator's server now: open keep-alive connections are cut, not waited for. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
}
