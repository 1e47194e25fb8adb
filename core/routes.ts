/**
 * Route declarations: every `/api` endpoint that runs through the pipeline is declared by the dialect
 * or plugin that answers it (method, path, operation, OpenAPI description). The server builds its
 * route table from these at boot and the OpenAPI document (`openapi.ts`) is built from the same list,
 * so an endpoint cannot exist without being documented, nor be documented without existing.
 */
import type { JsonSchema } from './json-schema.ts';
import type { ErrorCase, ErrorStatus } from './openapi/openapi-errors.ts';

export type RouteMethod = 'GET' | 'POST' | 'DELETE';

/** How one operation reads in the OpenAPI document (paths are relative to `servers[0].url`, `/api`). */
export interface RouteDoc {
  operationId: string;
  summary: string;
  description: string;
  /** Tag name and its description (the first declaration of a tag wins). */
  tag: { name: string; description: string };
  /** OpenAPI parameter objects (path parameters must be declared here). */
  parameters?: unknown[];
  /** OpenAPI request body object. */
  requestBody?: unknown;
  /** The 200 response object. */
  success: Record<string, unknown>;
  /** Statuses beyond the ones every authenticated operation can return, or a different "when" for one of them. */
  errors: Partial<Record<ErrorStatus, ErrorCase>>;
  /** Component schemas this operation's `$ref`s name, merged into `components.schemas`. */
  schemas?: Record<string, JsonSchema>;
}

/**
 * One endpoint. `path` is absolute and may hold one `{param}` segment (`/api/providers/{provider}`,
 * `/api/v1/responses/{id}/input_items`), or end in one greedy `{param+}` that also takes slashes
 * (`/api/v1/models/{model+}`: model ids are `provider/model`, and clients send the slash raw or as `%2F`).
 * Either may be followed by a `:action` suffix in the same segment, Google's custom-method form
 * (`/api/v1beta/models/{model+}:generateContent`, https://google.aip.dev/136).
 * The OpenAPI document names a greedy parameter without its `+`.
 */
export interface RouteDeclaration {
  method: RouteMethod;
  path: string;
  /** Stable operation name (`chat.completions`, `account.get`): `Exchange.operation`, metrics label. */
  operation: string;
  /** True when the request has a JSON body the dialect parses. */
  hasBody?: boolean;
  /**
   * What a dialect's route answers: a model call (billed, limited and logged; the default), or a
   * token count (answered by the provider's own counting endpoint when it speaks the dialect
   * natively, else by the local tokenizer; never billed), or a read of the model catalog in the
   * dialect's shape (no body; answered by the router, errors in the dialect's shape; never billed).
   */
  kind?: 'model-call' | 'token-count' | 'catalog';
  doc: RouteDoc;
}

/**
 * The operation of a request to a path under `/api` that no route declares. It still runs through
 * the pipeline (authenticated, logged, counted in `/metrics`) and is answered 404 `endpoint_not_found`.
 */
export const UNKNOWN_ENDPOINT = 'endpoint.unknown';

/**
 * The operation of `GET /api/v1/models/{id}` (docs/contract.md), declared by the provider router. Named
 * in core because it is metered (`isMeteredOperation` in `dialects/index.ts`): it may ask an upstream
 * for a user's model list, so rate limits and the request log must see it like a model call.
 */
export const MODELS_RETRIEVE = 'models.retrieve';

/** A route as the server matches it, with the owner's id attached. */
export interface MatchedRoute<T> {
  route: T;
  params: Readonly<Record<string, string>>;
}

const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});

/**
 * A method-and-path lookup over declared routes. Exact paths are one Map lookup with no allocation;
 * paths with a `{param}` segment are tried in declaration order.
 */
export interface RouteTable<T extends { method: RouteMethod; path: string }> {
  /** The routes at `path` by method, with decoded parameters; null when no route has this path. */
  match(path: string): { byMethod: ReadonlyMap<string, T>; params: Readonly<Record<string, string>> } | null;
  readonly routes: readonly T[];
}

interface ParamPattern<T> {
  prefix: string;
  param: string;
  /** True for `{param+}`: the value may span several segments. */
  greedy: boolean;
  suffix: string;
  byMethod: Map<string, T>;
}

const PARAM_SEGMENT = /^(.*\/)\{([a-z_]+)(\+?)\}(\/.*|:[A-Za-z]+)?$/;

/** Builds the table; throws when two declarations claim the same method and path. */
export function createRouteTable<T extends { method: RouteMethod; path: string }>(routes: readonly T[]): RouteTable<T> {
  const exact = new Map<string, { byMethod: Map<string, T>; params: Readonly<Record<string, string>> }>();
  const patterns: ParamPattern<T>[] = [];
  for (const route of routes) {
    const param = PARAM_SEGMENT.exec(route.path);
    let byMethod: Map<string, T>;
    if (param) {
      const greedy = param[3] === '+';
      const suffix = param[4] ?? '';
      if (greedy && suffix.startsWith('/')) throw new Error(`route ${route.path}: a greedy {${param[2]}+} parameter must end the path (or its segment, before a :action)`);
      let pattern = patterns.find((p) => p.prefix === param[1] && p.suffix === suffix && p.greedy === greedy);
      if (!pattern) patterns.push((pattern = { prefix: param[1]!, param: param[2]!, greedy, suffix, byMethod: new Map() }));
      byMethod = pattern.byMethod;
    } else {
      let entry = exact.get(route.path);
      if (!entry) exact.set(route.path, (entry = { byMethod: new Map(), params: NO_PARAMS }));
      byMethod = entry.byMethod;
    }
    if (byMethod.has(route.method)) throw new Error(`route ${route.method} ${route.path} is declared twice`);
    byMethod.set(route.method, route);
  }
  // A greedy parameter would swallow a path a one-segment pattern names: those are tried first; and
  // `{model}` would swallow `{model}:generateContent`, so a longer suffix goes before a shorter one.
  patterns.sort((a, b) => Number(a.greedy) - Number(b.greedy) || b.suffix.length - a.suffix.length);
  return {
    routes,
    match(path) {
      const hit = exact.get(path);
      if (hit) return hit;
      for (const pattern of patterns) {
        if (!path.startsWith(pattern.prefix) || !path.endsWith(pattern.suffix)) continue;
        const raw = path.slice(pattern.prefix.length, path.length - pattern.suffix.length);
        if (!raw || (!pattern.greedy && raw.includes('/'))) continue;
        try {
          return { byMethod: pattern.byMethod, params: { [pattern.param]: decodeURIComponent(raw) } };
        } catch {
          return null;
        }
      }
      return null;
    },
  };
}
