/**
 * Serving an in-memory file over HTTP with validators: a strong `ETag` (SHA-256 of the content,
 * computed once), `304 Not Modified` on a matching `If-None-Match` (RFC 9110 §13.1.2, weak
 * comparison), and a gzip variant chosen by `Accept-Encoding`, compressed once on first use.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';

const gzip = promisify(gzipCallback);

/** Below this size gzip saves too little to be worth a second variant. */
const MIN_GZIP_BYTES = 1024;

export interface StaticAsset {
  readonly body: Buffer;
  /** Quoted strong ETag of the identity body, e.g. `"q1w2..."`. */
  readonly etag: string;
  /** Headers sent with 200 and 304 alike: content-type, cache-control, security headers. */
  readonly headers: Readonly<Record<string, string>>;
  /** Whether a gzip variant exists (then responses carry `vary: accept-encoding`). */
  readonly hasGzip: boolean;
  /**
   * The gzip variant, compressed off the event loop on the first request that accepts it (a
   * megabyte-sized bundle would otherwise stall streams for tens of ms), then kept. Null without one.
   */
  gzipped(): Promise<{ body: Buffer; etag: string } | null>;
}

/** Wraps `body` with its ETag. `compressible` marks text worth a gzip variant. */
export function createStaticAsset(body: Buffer | string, headers: Record<string, string>, compressible = false): StaticAsset {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const hash = createHash('sha256').update(bytes).digest('base64url');
  const hasGzip = compressible && bytes.length >= MIN_GZIP_BYTES;
  let variant: Promise<{ body: Buffer; etag: string }> | null = null;
  return {
    body: bytes,
    etag: `"${hash}"`,
    headers,
    hasGzip,
    gzipped() {
      if (!hasGzip) return Promise.resolve(null);
      variant ??= gzip(bytes).then((zipped) => ({ body: zipped, etag: `"${hash}-gzip"` }));
      return variant;
    },
  };
}

/** Whether an `If-None-Match` header names one of `etags` (weak comparison: `W/` is ignored). */
export function ifNoneMatchHits(header: string | undefined, etags: readonly string[]): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => etags.includes(tag.trim().replace(/^W\//, '')));
}

/** Whether `Accept-Encoding` allows gzip (`gzip` or `*`, with a q-value above 0). */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  if (typeof header !== 'string') return false;
  return header.split(',').some((entry) => {
    const [coding, ...params] = entry.split(';').map((part) => part.trim().toLowerCase());
    if (coding !== 'gzip' && coding !== '*') return false;
    const q = params.find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/** Answers with `asset`: 304 when the client's copy is current, else 200 with the best variant. */
export async function sendStaticAsset(req: IncomingMessage, res: ServerResponse, asset: StaticAsset, requestId: string): Promise<void> {
  const variant = acceptsGzip(req.headers['accept-encoding']) ? await asset.gzipped() : null;
  const etag = variant?.etag ?? asset.etag;
  const headers: OutgoingHttpHeaders = Object.assign({}, asset.headers, { etag, 'x-request-id': requestId });
  if (asset.hasGzip) headers.vary = asset.headers.vary ? `${asset.headers.vary}, accept-encoding` : 'accept-encoding';
  // Either variant's tag proves the client holds the current content.
  if (ifNoneMatchHits(req.headers['if-none-match'], [asset.etag, `"${asset.etag.slice(1, -1)}-gzip"`])) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  const body = variant?.body ?? asset.body;
  res.writeHead(200, Object.assign({}, headers, { 'content-length': body.length }, variant ? { 'content-encoding': 'gzip' } : {}));
  res.end(body);
}
