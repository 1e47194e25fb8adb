/**
 * The OpenAPI 3.1 document of the `/api` endpoints (docs/contract.md "HTTP API" and "Errors"), served at
 * `GET /api/openapi.json`, built from the route declarations of the dialects and the listed plugins
 * (`routes.ts`): each declaration brings its operation, its request and response description and the
 * component schemas it names (request bodies are converted from the very schemas the dialects validate
 * with, so the document cannot drift from what is enforced); shared response bodies come from
 * `api-response-schemas.ts`, error responses from the error catalog. Everything but `servers` is
 * built once.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { packageRoot } from '../runtime/package-root.ts';
import type { JsonSchema } from '../json-schema.ts';
import { responseSchemas } from './api-response-schemas.ts';
import { errorResponse, openApiHeaders, type ErrorCase, type ErrorStatus } from './openapi-errors.ts';
import type { RouteDeclaration } from '../routes.ts';

/** An OpenAPI 3.1 document (the fields this module writes; see spec.openapis.org/oas/v3.1.0). */
export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  servers: Array<{ url: string; description: string }>;
  security: Array<Record<string, string[]>>;
  tags: Array<{ name: string; description: string }>;
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: {
    schemas: Record<string, JsonSchema>;
    headers: Record<string, unknown>;
    securitySchemes: Record<string, unknown>;
  };
}

export interface OpenApiOperation {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  security: Array<Record<string, string[]>>;
  parameters?: unknown[];
  requestBody?: unknown;
  responses: Record<string, unknown>;
}

/** Either scheme authenticates (OpenAPI: alternatives are separate entries). */
const SECURITY: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { apiKeyHeader: [] }];
/** Declared paths are absolute; the document's are relative to `servers[0].url` (`<origin>/api`). */
const API_PREFIX = '/api';

const PACKAGE_VERSION = (JSON.parse(readFileSync(join(packageRoot(import.meta.url), 'package.json'), 'utf8')) as { version: string }).version;

const DESCRIPTION = `Tollgate's OpenAI-compatible API. Point an OpenAI SDK at \`<this server>/api/v1\` with a Tollgate API key.

**Authentication**: \`Authorization: Bearer <key>\` or \`x-api-key: <key>\`, a gateway user's API key (\`tollgate keys create\`). This document and \`/api/docs\` need none.

**Errors**: always \`{"error":{"message","type","code","param"}}\`; each operation lists the statuses it can return and when. After a stream's headers are sent, an error arrives as a final \`data: {"error":{...}}\` event and the stream ends.

**Units**: money in USD (decimal numbers), tokens as integers, durations in milliseconds unless a field says otherwise. Every response carries \`x-request-id\`; quote it when reporting a problem.`;

/** Statuses every authenticated pipeline operation can return, with when. */
const COMMON_ERRORS: Partial<Record<ErrorStatus, ErrorCase>> = {
  401: 'The API key is missing, unknown, revoked or expired.',
  403: 'The key\'s gateway user is disabled.',
  500: 'Something unexpected failed inside the gateway; the details are in the server log under the x-request-id.',
  503: 'The gateway is shutting down; retry shortly (another instance, or this one after its restart).',
};

function buildOperation(spec: RouteDeclaration['doc']): OpenApiOperation {
  const when = { ...COMMON_ERRORS, ...spec.errors };
  const statuses = (Object.keys(when).map(Number) as ErrorStatus[]).sort((a, b) => a - b);
  const responses: Record<string, unknown> = { 200: spec.success };
  for (const status of statuses) responses[status] = errorResponse(status, when[status]!);
  return {
    operationId: spec.operationId,
    summary: spec.summary,
    description: spec.description,
    tags: [spec.tag.name],
    security: SECURITY,
    ...(spec.parameters ? { parameters: spec.parameters } : {}),
    ...(spec.requestBody ? { requestBody: spec.requestBody } : {}),
    responses,
  };
}

function buildStaticParts(routes: readonly RouteDeclaration[]): Omit<OpenApiDocument, 'servers'> {
  const paths: OpenApiDocument['paths'] = {};
  const tags = new Map<string, string>();
  const schemas: Record<string, JsonSchema> = {};
  for (const route of routes) {
    const absolute = route.path.replace(/\{([a-z_]+)\+\}/, '{$1}');
    const path = absolute.startsWith(`${API_PREFIX}/`) ? absolute.slice(API_PREFIX.length) : absolute;
    (paths[path] ??= {})[route.method.toLowerCase()] = buildOperation(route.doc);
    if (!tags.has(route.doc.tag.name)) tags.set(route.doc.tag.name, route.doc.tag.description);
    Object.assign(schemas, route.doc.schemas);
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Tollgate API', version: PACKAGE_VERSION, description: DESCRIPTION },
    security: SECURITY,
    tags: [...tags].map(([name, description]) => ({ name, description })),
    paths,
    components: {
      schemas: { ...schemas, ...responseSchemas },
      headers: openApiHeaders,
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'A Tollgate API key as `Authorization: Bearer <key>` (what OpenAI SDKs send).' },
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'The same API key in an `x-api-key` header.' },
      },
    },
  };
}

/**
 * A builder of the document for `routes`. `build(origin)` gives the document for clients that
 * reached the gateway at `origin` (`scheme://host[:port]`, no trailing slash): `servers[0].url` is
 * `<origin>/api`, so the paths read as under `/api`. Pass `''` for a relative server URL (`/api`,
 * resolved against where the document was fetched). Everything else is built once and shared between
 * calls: treat the result as read-only.
 */
export function createOpenApiBuilder(routes: readonly RouteDeclaration[]): (origin: string) => OpenApiDocument {
  let staticParts: Omit<OpenApiDocument, 'servers'> | null = null;
  return (origin) => {
    staticParts ??= buildStaticParts(routes);
    return { ...staticParts, servers: [{ url: `${origin}/api`, description: 'This gateway, as your client reached it.' }] };
  };
}
