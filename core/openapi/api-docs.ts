/**
 * `GET /api/openapi.json` (the OpenAPI 3.1 document, `openapi.ts`) and `GET /api/docs` (Swagger UI
 * from the installed `swagger-ui-dist` package, served from node_modules, no CDN). Neither needs an
 * API key. They are local routes of the server, outside the plugin pipeline.
 *
 * - The docs page is our own HTML; its init code is a separate script (`/api/docs/init.js`) so the
 *   page runs under a CSP without `'unsafe-inline'` scripts. Only the files in `VENDOR_FILES` are
 *   served, each as its own exact route: a request path is never mapped onto the file system, so
 *   `..`, `%2e%2e` and the like simply match no route (404).
 * - Vendor files are read on first request, not at boot, and kept in memory with their ETag.
 * - `servers[0].url` is `<scheme>://<host>/api` as the client reached the gateway. Behind a reverse
 *   proxy, `x-forwarded-proto` and `x-forwarded-host` are honoured: the document goes only to the
 *   client that sent them and is cached per origin (bounded), so a forged header misleads nobody but
 *   its sender. A host that is not a plain `name[:port]` yields the relative URL `/api` instead.
 * - Building, hashing and compressing the document for a new origin takes ~3 ms of CPU (against
 *   ~0.25 ms to serve a cached one), and a client chooses its Host freely: at most
 *   `NEW_ORIGINS_PER_MINUTE` new origins get their own document each minute; beyond that a request
 *   gets the relative one (`/api`, valid from any origin), so random Host headers cost no more than a
 *   cached document.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { LRUCache } from 'lru-cache';
import { createGcraLimiter } from '../coordination/gcra.ts';
import { createOpenApiBuilder } from './openapi.ts';
import type { RouteDeclaration } from '../routes.ts';
import { createStaticAsset, sendStaticAsset, type StaticAsset } from '../http/static-asset.ts';

/** A local route of `createGatewayServer` (`localRoutes`). */
export type LocalRoute = (req: IncomingMessage, res: ServerResponse, requestId: string) => void | Promise<void>;

const DOCS = '/api/docs';
export const OPENAPI_PATH = '/api/openapi.json';

/** The swagger-ui-dist files the page loads, and nothing else. */
const VENDOR_FILES: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'index.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
  'favicon-16x16.png': 'image/png',
};

/**
 * Swagger UI needs inline *styles* (its React components and rendered Markdown set style attributes)
 * and `data:` images (its CSS icons); scripts are ours or the vendor files only.
 */
const CSP = [
  "default-src 'none'", "script-src 'self'", "style-src 'self' 'unsafe-inline'", "img-src 'self' data:",
  "font-src 'self' data:", "connect-src 'self'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'",
].join('; ');

const COMMON_HEADERS = { 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer' };
/** Our own files change with the gateway: revalidate each time (a cheap 304). */
const REVALIDATE = 'no-cache';
/** Vendor files change only with the package; revalidated after a day. */
const VENDOR_CACHE = 'public, max-age=86400';

const PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tollgate API docs</title>
<link rel="stylesheet" href="${DOCS}/swagger-ui.css">
<link rel="stylesheet" href="${DOCS}/index.css">
<link rel="icon" type="image/png" href="${DOCS}/favicon-32x32.png" sizes="32x32">
<link rel="icon" type="image/png" href="${DOCS}/favicon-16x16.png" sizes="16x16">
</head>
<body>
<div id="swagger-ui"></div>
<script src="${DOCS}/swagger-ui-bundle.js"></script>
<script src="${DOCS}/swagger-ui-standalone-preset.js"></script>
<script src="${DOCS}/init.js"></script>
</body>
</html>
`;

// validatorUrl null: the default sends the document to validator.swagger.io. persistAuthorization
// stays off so a pasted API key is not left in localStorage.
const INIT_SCRIPT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '${OPENAPI_PATH}',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    persistAuthorization: false,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
    plugins: [SwaggerUIBundle.plugins.DownloadUrl],
    layout: 'StandaloneLayout'
  });
});
`;

const HOST = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

const firstValue = (value: string | string[] | undefined): string | undefined =>
  (Array.isArray(value) ? value[0] : value)?.split(',')[0]?.trim() || undefined;

/** How many origins not in the cache may have their document built per minute (see the module doc). */
export const NEW_ORIGINS_PER_MINUTE = 10;

/** `scheme://host[:port]` as the client reached us, or `''` when the host is missing or odd. */
export function requestOrigin(req: IncomingMessage): string {
  const forwardedProto = firstValue(req.headers['x-forwarded-proto'])?.toLowerCase();
  const proto = forwardedProto === 'http' || forwardedProto === 'https'
    ? forwardedProto
    : (req.socket as TLSSocket).encrypted ? 'https' : 'http';
  const host = firstValue(req.headers['x-forwarded-host']) ?? req.headers.host;
  return host && HOST.test(host) ? `${proto}://${host}` : '';
}

/** The swagger-ui-dist directory, found the way Node resolves the package (works from dist/ too). */
function swaggerUiDir(): string {
  return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}

/**
 * Routes for `createGatewayServer({ localRoutes })`: the document of the declared `routes`, the page,
 * its assets (GET and HEAD).
 */
export function apiDocsRoutes(declared: readonly RouteDeclaration[]): Record<string, LocalRoute> {
  const build = createOpenApiBuilder(declared);
  const documents = new LRUCache<string, StaticAsset>({ max: 32 });
  const page = createStaticAsset(PAGE, { ...COMMON_HEADERS, 'content-type': 'text/html; charset=utf-8', 'cache-control': REVALIDATE, 'content-security-policy': CSP });
  const init = createStaticAsset(INIT_SCRIPT, { ...COMMON_HEADERS, 'content-type': 'text/javascript; charset=utf-8', 'cache-control': REVALIDATE });
  const vendor = new Map<string, Promise<StaticAsset>>();

  const loadVendor = (file: string, contentType: string): Promise<StaticAsset> => {
    let asset = vendor.get(file);
    if (!asset) {
      const headers = { ...COMMON_HEADERS, 'content-type': contentType, 'cache-control': VENDOR_CACHE };
      asset = readFile(join(swaggerUiDir(), file)).then((body) => createStaticAsset(body, headers, !contentType.startsWith('image/')));
      // A failed read (package missing) is retried on the next request rather than cached.
      asset.catch(() => vendor.delete(file));
      vendor.set(file, asset);
    }
    return asset;
  };

  // Builds for new origins, as the rate limits count requests: a burst of the minute's allowance,
  // then one more every 60 s / NEW_ORIGINS_PER_MINUTE.
  const builds = createGcraLimiter({ limit: NEW_ORIGINS_PER_MINUTE, periodMs: 60_000 });
  const mayBuild = (): boolean => builds.tryTake('', 1, Date.now()).allowed;

  const documentFor = (origin: string): StaticAsset => createStaticAsset(JSON.stringify(build(origin)), {
    'content-type': 'application/json',
    'cache-control': REVALIDATE,
    vary: 'host, x-forwarded-host, x-forwarded-proto',
    // Public and credential-free: let other origins' OpenAPI tools read it.
    'access-control-allow-origin': '*',
    ...COMMON_HEADERS,
  }, true);
  /** The document with the relative server URL: for odd hosts, and once new origins are over budget. */
  let relative: StaticAsset | null = null;
  const relativeDocument = (): StaticAsset => (relative ??= documentFor(''));

  const serveDocument: LocalRoute = (req, res, requestId) => {
    const origin = requestOrigin(req);
    let document = origin === '' ? relativeDocument() : documents.get(origin);
    if (!document) {
      if (mayBuild()) documents.set(origin, (document = documentFor(origin)));
      else document = relativeDocument();
    }
    return sendStaticAsset(req, res, document, requestId);
  };
  const servePage: LocalRoute = (req, res, requestId) => sendStaticAsset(req, res, page, requestId);

  const routes: Record<string, LocalRoute> = {
    [OPENAPI_PATH]: serveDocument,
    [DOCS]: servePage,
    [`${DOCS}/`]: servePage,
    [`${DOCS}/init.js`]: (req, res, requestId) => sendStaticAsset(req, res, init, requestId),
  };
  for (const [file, contentType] of Object.entries(VENDOR_FILES)) {
    routes[`${DOCS}/${file}`] = async (req, res, requestId) => sendStaticAsset(req, res, await loadVendor(file, contentType), requestId);
  }
  return Object.fromEntries(Object.entries(routes).flatMap(([path, route]) => [[`GET ${path}`, route], [`HEAD ${path}`, route]]));
}
