/**
 * The admin web UI's files: `admin-static/` (Preact + htm ES modules, no build step) and three vendor
 * modules from node_modules (`preact`, `preact/hooks`, `htm`) that the page's import map points at.
 * Every file is read once at boot into memory with its ETag (`static-asset.ts`: 304s, gzip), so a
 * request path is a Map lookup and never touches the file system (`..` cannot escape).
 *
 * The page runs under a strict CSP: scripts only from this origin plus the one inline import map,
 * allowed by its SHA-256; inline styles are allowed because components set `style` for bar widths.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join, relative, sep } from 'node:path';
import { packageRoot } from '../runtime/package-root.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createStaticAsset, sendStaticAsset, type StaticAsset } from '../http/static-asset.ts';
import { routeNotFound } from '../errors.ts';
import { sendError } from '../http/respond.ts';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
};

const COMMON_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
  'cache-control': 'no-cache',
};

/** `admin-static/` in the package root (or `folder`: the portal's `portal-static/`). */
export function adminStaticDir(folder = 'admin-static'): string {
  const dir = join(packageRoot(import.meta.url), folder);
  if (!existsSync(join(dir, 'index.html'))) throw new Error(`${folder}/index.html not found in ${dir}`);
  return dir;
}

function listFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return listFiles(path);
    return entry.isFile() && CONTENT_TYPES[extname(entry.name)] ? [path] : [];
  });
}

function vendorFiles(): Record<string, string> {
  const require = createRequire(import.meta.url);
  const near = (specifier: string, file: string) => join(dirname(require.resolve(specifier)), file);
  return {
    'vendor/preact.mjs': near('preact', 'preact.module.js'),
    'vendor/hooks.mjs': near('preact/hooks', 'hooks.module.js'),
    'vendor/htm.mjs': near('htm', 'htm.module.js'),
  };
}

/** The CSP for index.html: the inline import map is allowed by its hash, nothing else inline. */
function pageCsp(html: string): string {
  const importMap = /<script type="importmap">([\s\S]*?)<\/script>/.exec(html)?.[1];
  const hash = importMap === undefined ? '' : ` 'sha256-${createHash('sha256').update(importMap).digest('base64')}'`;
  return [
    "default-src 'self'", `script-src 'self'${hash}`, "style-src 'self' 'unsafe-inline'", "img-src 'self' data:",
    "connect-src 'self'", "base-uri 'none'", "form-action 'self'", "frame-ancestors 'none'", "object-src 'none'",
  ].join('; ');
}

/**
 * `GET /` → 302 `/admin/`: someone who opens the gateway's address in a browser lands on the admin
 * UI. A 302, not a permanent redirect, so a browser does not remember it if the admin UI is later
 * turned off.
 */
export function redirectToAdmin(_req: IncomingMessage, res: ServerResponse, requestId: string): void {
  res.writeHead(302, { location: '/admin/', 'x-request-id': requestId, 'cache-control': 'no-store' });
  res.end();
}

export interface AdminStatic {
  /** Serves `<mount>`, `<mount>/` and `<mount>/<file>`; 404 for anything else under `<mount>/`. */
  handle(req: IncomingMessage, res: ServerResponse, requestId: string, path: string): Promise<void>;
}

/**
 * The files of `dir` served under `mount` (`/admin`; the self-service portal serves `portal-static/`
 * under `/portal` the same way, with the same vendor modules and CSP).
 */
export function createAdminStatic(dir = adminStaticDir(), mount = '/admin'): AdminStatic {
  const assets = new Map<string, StaticAsset>();
  for (const file of listFiles(dir)) {
    const urlPath = relative(dir, file).split(sep).join('/');
    const type = CONTENT_TYPES[extname(file)]!;
    const body = readFileSync(file);
    const headers: Record<string, string> = { ...COMMON_HEADERS, 'content-type': type };
    if (urlPath.endsWith('.html')) headers['content-security-policy'] = pageCsp(body.toString('utf8'));
    assets.set(urlPath, createStaticAsset(body, headers, !type.startsWith('image/png')));
  }
  for (const [urlPath, file] of Object.entries(vendorFiles())) {
    assets.set(urlPath, createStaticAsset(readFileSync(file), { ...COMMON_HEADERS, 'content-type': CONTENT_TYPES['.mjs']! }, true));
  }

  return {
    async handle(req, res, requestId, path) {
      if (path === mount) {
        res.writeHead(308, { location: `${mount}/`, 'x-request-id': requestId });
        res.end();
        return;
      }
      const name = path === `${mount}/` ? 'index.html' : path.slice(mount.length + 1);
      const asset = assets.get(name);
      if (!asset || (req.method !== 'GET' && req.method !== 'HEAD')) {
        sendError(res, routeNotFound(req.method ?? 'GET', path), requestId);
        return;
      }
      await sendStaticAsset(req, res, asset, requestId);
    },
  };
}
