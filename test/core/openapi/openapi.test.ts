/**
 * `GET /api/openapi.json` and `GET /api/docs` against the whole gateway (OpenAI simulator upstream):
 * the document's shape, that its request schema IS the validator's, that its response schemas accept
 * what the gateway really answers, and that the Swagger UI page is served locally and safely.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { startOpenAISimulator, type OpenAISimulator } from '../../helpers/openai-simulator.ts';
import { startTestGateway, type TestGateway } from '../../helpers/test-gateway.ts';
import { chatCompletionRequestSchema } from '../../../core/dialects/openai-chat/request-schema.ts';
import { toJsonSchema2020 } from '../../../core/openapi/json-schema-2020.ts';
import { acceptsGzip, ifNoneMatchHits } from '../../../core/http/static-asset.ts';
import type { OpenApiDocument, OpenApiOperation } from '../../../core/openapi/openapi.ts';
import { NEW_ORIGINS_PER_MINUTE } from '../../../core/openapi/api-docs.ts';

let sim: OpenAISimulator;
let tg: TestGateway;
let origin: string;
let doc: OpenApiDocument;

/** docs/contract.md "HTTP API": every path under /api (relative to servers[0].url) and its methods. */
const CONTRACT_PATHS: Record<string, string[]> = {
  '/v1/chat/completions': ['post'],
  '/v1/models': ['get'],
  '/v1/models/{model}': ['get'],
  '/models': ['get'],
  '/account': ['get'],
  '/pricing': ['get'],
  '/providers/{provider}': ['get'],
  '/v1/messages': ['post'],
  '/v1/messages/count_tokens': ['post'],
  // What `@ai-sdk/anthropic` and opencode call with ANTHROPIC_BASE_URL=<gateway>/api.
  '/messages': ['post'],
  '/messages/count_tokens': ['post'],
  '/v1/responses': ['post'],
  '/v1/responses/{id}': ['delete', 'get'],
  '/v1/responses/{id}/input_items': ['get'],
  '/v1beta/models/{model}:generateContent': ['post'],
  '/v1beta/models/{model}:streamGenerateContent': ['post'],
  '/v1beta/models/{model}:countTokens': ['post'],
  '/v1beta/models/{model}:embedContent': ['post'],
  '/v1beta/models/{model}:batchEmbedContents': ['post'],
  '/v1beta/models': ['get'],
  '/v1beta/models/{model}': ['get'],
  '/v1/models/{model}:generateContent': ['post'],
  '/v1/models/{model}:streamGenerateContent': ['post'],
  '/v1/models/{model}:countTokens': ['post'],
  '/v1/models/{model}:embedContent': ['post'],
  '/v1/models/{model}:batchEmbedContents': ['post'],
  '/v1/embeddings': ['post'],
};

const SWAGGER_DIR = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

function operations(): Array<[string, OpenApiOperation]> {
  return Object.entries(doc.paths).flatMap(([path, byMethod]) =>
    Object.entries(byMethod).map(([method, op]) => [`${method.toUpperCase()} ${path}`, op] as [string, OpenApiOperation]));
}

/** The value at a `#/a/b` JSON pointer of the document, or undefined. */
function resolvePointer(ref: string): unknown {
  assert.ok(ref.startsWith('#/'), `only local refs are used: ${ref}`);
  let node: unknown = doc;
  for (const raw of ref.slice(2).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || !(key in node)) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

function collectRefs(node: unknown, into: string[] = []): string[] {
  if (Array.isArray(node)) for (const item of node) collectRefs(item, into);
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') into.push(value);
      else collectRefs(value, into);
    }
  }
  return into;
}

/** A validator of the document's component schema `name` (JSON Schema 2020-12, as OpenAPI 3.1 reads it). */
function schemaValidator(name: string) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema({ $id: 'urn:tollgate:openapi', components: { schemas: doc.components.schemas } });
  const validate = ajv.getSchema(`urn:tollgate:openapi#/components/schemas/${name}`);
  assert.ok(validate, `schema ${name} compiles`);
  return (value: unknown) => assert.ok(validate(value), `${name}: ${JSON.stringify(validate.errors)}\n${JSON.stringify(value)}`);
}

/** GET with node:http, sending the path byte for byte (fetch would normalize `..`). */
function rawGet(path: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = request({ hostname, port, path, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

before(async () => {
  sim = await startOpenAISimulator();
  tg = await startTestGateway({ providers: { openai: { type: 'openai', baseUrl: sim.baseUrl, apiKey: 'sk-test' } } });
  origin = tg.gateway.origin;
  const res = await fetch(`${origin}/api/openapi.json`);
  assert.equal(res.status, 200);
  doc = (await res.json()) as OpenApiDocument;
});

after(async () => {
  await tg?.close();
  await sim?.close();
});

describe('GET /api/openapi.json', () => {
  test('is served without an API key as an OpenAPI 3.1 document whose server is the origin the client used', async () => {
    const res = await fetch(`${origin}/api/openapi.json`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/json');
    assert.match(res.headers.get('x-request-id') ?? '', /^req_[0-9a-f]{32}$/);
    const body = (await res.json()) as OpenApiDocument;
    assert.equal(body.openapi, '3.1.0');
    assert.deepEqual(body.servers.map((s) => s.url), [`${origin}/api`]);
    assert.equal(body.info.title, 'Tollgate API');
    assert.match(body.info.version, /^\d+\.\d+\.\d+/);
  });

  test('honours x-forwarded-proto and x-forwarded-host, and falls back to a relative server for an odd host', async () => {
    const proxied = await fetch(`${origin}/api/openapi.json`, { headers: { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'llm.example.com, internal:8787' } });
    assert.deepEqual(((await proxied.json()) as OpenApiDocument).servers.map((s) => s.url), ['https://llm.example.com/api']);
    const odd = await fetch(`${origin}/api/openapi.json`, { headers: { 'x-forwarded-host': 'evil.example/"><script>' } });
    assert.deepEqual(((await odd.json()) as OpenApiDocument).servers.map((s) => s.url), ['/api']);
    const plain = await fetch(`${origin}/api/openapi.json`);
    assert.deepEqual(((await plain.json()) as OpenApiDocument).servers.map((s) => s.url), [`${origin}/api`], 'other origins did not leak into this one');
  });

  test(`builds documents for at most ${NEW_ORIGINS_PER_MINUTE} new origins a minute; beyond, the relative one (random Host headers cost nothing more)`, async () => {
    const servers: string[] = [];
    for (let i = 0; i < NEW_ORIGINS_PER_MINUTE + 5; i++) {
      const res = await fetch(`${origin}/api/openapi.json`, { headers: { 'x-forwarded-host': `h${i}.example.com` } });
      servers.push(((await res.json()) as OpenApiDocument).servers[0]!.url);
    }
    assert.ok(servers.filter((url) => url !== '/api').length <= NEW_ORIGINS_PER_MINUTE, servers.join(' '));
    assert.deepEqual(servers.slice(-5), Array(5).fill('/api'));
    assert.ok(servers.every((url, i) => url === '/api' || url === `http://h${i}.example.com/api`), servers.join(' '));
    const plain = await fetch(`${origin}/api/openapi.json`);
    assert.deepEqual(((await plain.json()) as OpenApiDocument).servers.map((s) => s.url), [`${origin}/api`], 'an origin already built keeps its document');
  });

  test('answers 304 to a matching If-None-Match', async () => {
    const first = await fetch(`${origin}/api/openapi.json`);
    const etag = first.headers.get('etag');
    assert.ok(etag);
    assert.equal(first.headers.get('cache-control'), 'no-cache');
    const again = await fetch(`${origin}/api/openapi.json`, { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    assert.equal(await again.text(), '');
  });

  test('documents every /api path of the contract with its methods, and nothing else', () => {
    const documented = Object.fromEntries(Object.entries(doc.paths).map(([path, byMethod]) => [path, Object.keys(byMethod).sort()]));
    assert.deepEqual(documented, CONTRACT_PATHS);
    const [parameter, ...more] = (doc.paths['/providers/{provider}']!.get!.parameters ?? []) as Array<Record<string, unknown>>;
    assert.deepEqual([parameter?.name, parameter?.in, parameter?.required, parameter?.schema, more.length], ['provider', 'path', true, { type: 'string' }, 0]);
    const ids = operations().map(([, op]) => op.operationId);
    assert.equal(new Set(ids).size, ids.length, 'operationIds are unique');
  });

  test('declares bearer and x-api-key auth and requires one of them on every operation', () => {
    const bearer = doc.components.securitySchemes.bearerAuth as Record<string, string>;
    assert.deepEqual([bearer.type, bearer.scheme], ['http', 'bearer']);
    const apiKey = doc.components.securitySchemes.apiKeyHeader as Record<string, string>;
    assert.deepEqual([apiKey.type, apiKey.in, apiKey.name], ['apiKey', 'header', 'x-api-key']);
    for (const [name, op] of operations()) assert.deepEqual(op.security, [{ bearerAuth: [] }, { apiKeyHeader: [] }], name);
  });

  test('every operation documents 200, 401 and 500, and each error with the Error schema and a description', () => {
    for (const [name, op] of operations()) {
      for (const status of ['200', '401', '500']) assert.ok(op.responses[status], `${name} documents ${status}`);
      const unauthorized = op.responses['401'] as { headers: Record<string, unknown> };
      assert.ok(unauthorized.headers['www-authenticate'], `${name}: 401 carries WWW-Authenticate`);
      for (const [status, response] of Object.entries(op.responses)) {
        const r = response as { description: string; headers: Record<string, unknown>; content: Record<string, { schema: { $ref?: string } }> };
        assert.ok(r.description.length > 20, `${name} ${status} says what or when`);
        assert.ok(r.headers['x-request-id'], `${name} ${status} documents x-request-id`);
        if (status !== '200') assert.equal(r.content['application/json']!.schema.$ref, '#/components/schemas/Error', `${name} ${status}`);
      }
    }
  });

  test('lists per operation the statuses of the contract\'s Errors table that can happen there', () => {
    const statuses = (path: string, method: string) => Object.keys(doc.paths[path]![method]!.responses).sort();
    assert.deepEqual(statuses('/v1/chat/completions', 'post'), ['200', '400', '401', '402', '403', '404', '413', '429', '500', '502', '503', '504']);
    assert.deepEqual(statuses('/providers/{provider}', 'get'), ['200', '401', '403', '404', '500', '503']);
    for (const path of ['/v1/models', '/models', '/account', '/pricing']) assert.deepEqual(statuses(path, 'get'), ['200', '401', '403', '500', '503'], path);

    const chat = doc.paths['/v1/chat/completions']!.post!.responses as Record<string, { headers: Record<string, unknown> }>;
    assert.deepEqual(Object.keys(chat['429']!.headers).sort(), [
      'retry-after', 'retry-after-ms', 'x-ratelimit-limit-requests', 'x-ratelimit-limit-tokens', 'x-ratelimit-remaining-requests',
      'x-ratelimit-remaining-tokens', 'x-ratelimit-reset-requests', 'x-ratelimit-reset-tokens', 'x-request-id',
    ]);
    assert.ok(chat['402']!.headers['x-should-retry']);
    const errorExample = (path: string, method: string, status: string) =>
      (doc.paths[path]![method]!.responses[status] as { content: Record<string, { example: { error: { code: string } } }> }).content['application/json']!.example;
    const validateError = schemaValidator('Error');
    for (const [path, byMethod] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(byMethod)) {
        for (const status of Object.keys(op.responses).filter((s) => s !== '200')) validateError(errorExample(path, method, status));
      }
    }
    assert.equal(errorExample('/providers/{provider}', 'get', '404').error.code, 'provider_not_found');
    assert.equal(errorExample('/v1/chat/completions', 'post', '404').error.code, 'model_not_found');
    assert.ok(chat['200']!.headers['x-ratelimit-remaining-requests'], 'proxied responses document the x-ratelimit-* headers');
  });

  test('the chat request schema is the validator\'s own schema converted to JSON Schema 2020-12', () => {
    const name = 'ChatCompletionRequest';
    const op = doc.paths['/v1/chat/completions']!.post!;
    const body = op.requestBody as { required: boolean; content: Record<string, { schema: { $ref: string } }> };
    assert.equal(body.required, true);
    assert.equal(body.content['application/json']!.schema.$ref, `#/components/schemas/${name}`);
    const schema = doc.components.schemas[name]!;
    assert.deepEqual(schema, toJsonSchema2020(chatCompletionRequestSchema, { basePointer: `#/components/schemas/${name}` }));
    assert.deepEqual([...(schema.required ?? [])].sort(), ['messages', 'model']);
  });

  test('the chat 200 response offers JSON and an event stream of chunks, with examples', () => {
    const ok = doc.paths['/v1/chat/completions']!.post!.responses['200'] as { content: Record<string, { schema: { $ref: string }; example: unknown }> };
    assert.equal(ok.content['application/json']!.schema.$ref, '#/components/schemas/ChatCompletion');
    assert.equal(ok.content['text/event-stream']!.schema.$ref, '#/components/schemas/ChatCompletionChunk');
    schemaValidator('ChatCompletion')(ok.content['application/json']!.example);
    const sse = ok.content['text/event-stream']!.example as string;
    assert.match(sse, /data: \[DONE\]\n\n$/);
    const validateChunk = schemaValidator('ChatCompletionChunk');
    for (const line of sse.split('\n\n').filter((l) => l && l !== 'data: [DONE]')) validateChunk(JSON.parse(line.slice('data: '.length)));
  });

  test('every $ref resolves and every component schema is valid JSON Schema 2020-12', () => {
    const refs = collectRefs(doc);
    assert.ok(refs.length > 50);
    for (const ref of new Set(refs)) assert.notEqual(resolvePointer(ref), undefined, `${ref} resolves`);
    // Union types (`type: ["string", "array"]`) are plain JSON Schema 2020-12, as OpenAPI 3.1 allows.
    const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, validateFormats: false });
    for (const [name, schema] of Object.entries(doc.components.schemas)) {
      // Strict mode rejects unknown keywords and malformed schemas; refs are stubbed as any-value.
      const stubbed = JSON.parse(JSON.stringify(schema).replace(/\{"\$ref":"[^"]+"/g, '{"type":["object","null"]')) as object;
      assert.doesNotThrow(() => ajv.compile(stubbed), name);
    }
  });

  // No OpenAPI validator package is installed: check the structure the 3.1 specification requires.
  test('is structurally valid OpenAPI 3.1: known fields, declared path parameters, schemes and tags', () => {
    const allowed = (obj: object, keys: string[], where: string) => {
      for (const key of Object.keys(obj)) assert.ok(keys.includes(key) || key.startsWith('x-'), `${where}: unexpected field "${key}"`);
    };
    allowed(doc, ['openapi', 'info', 'jsonSchemaDialect', 'servers', 'paths', 'webhooks', 'components', 'security', 'tags', 'externalDocs'], 'document');
    assert.ok(doc.info.title && doc.info.version);
    allowed(doc.components, ['schemas', 'responses', 'parameters', 'examples', 'requestBodies', 'headers', 'securitySchemes', 'links', 'callbacks', 'pathItems'], 'components');
    const schemes = Object.keys(doc.components.securitySchemes);
    const tags = doc.tags.map((t) => t.name);
    for (const requirement of doc.security) for (const scheme of Object.keys(requirement)) assert.ok(schemes.includes(scheme));
    for (const [path, byMethod] of Object.entries(doc.paths)) {
      assert.match(path, /^\//);
      for (const [method, op] of Object.entries(byMethod)) {
        const where = `${method} ${path}`;
        assert.ok(['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'].includes(method), where);
        allowed(op, ['tags', 'summary', 'description', 'externalDocs', 'operationId', 'parameters', 'requestBody', 'responses', 'callbacks', 'deprecated', 'security', 'servers'], where);
        for (const tag of op.tags) assert.ok(tags.includes(tag), `${where}: tag ${tag} declared`);
        for (const requirement of op.security) for (const scheme of Object.keys(requirement)) assert.ok(schemes.includes(scheme), where);
        const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
        const declared = ((op.parameters ?? []) as Array<{ name: string; in: string; required?: boolean; schema?: object }>).filter((p) => p.in === 'path');
        assert.deepEqual(declared.map((p) => p.name), templated, `${where}: path parameters`);
        for (const p of declared) assert.ok(p.required === true && p.schema, `${where}: ${p.name} is required and typed`);
        assert.ok(Object.keys(op.responses).length > 0, `${where} has responses`);
        for (const [status, response] of Object.entries(op.responses as Record<string, { content?: Record<string, { schema?: object }> }>)) {
          assert.match(status, /^(?:[1-5](?:\d\d|XX)|default)$/, where);
          for (const [mediaType, media] of Object.entries(response.content ?? {})) assert.ok(media.schema, `${where} ${status} ${mediaType} has a schema`);
        }
      }
    }
    for (const [name, header] of Object.entries(doc.components.headers as Record<string, object>)) {
      assert.ok('schema' in header && !('name' in header) && !('in' in header), `header ${name}`);
    }
  });

  test('every operation, response, header, schema property and security scheme has a description', () => {
    for (const [name, op] of operations()) {
      assert.ok(op.summary && op.description, name);
      for (const [status, response] of Object.entries(op.responses)) assert.ok((response as { description: string }).description, `${name} ${status}`);
    }
    for (const [name, header] of Object.entries(doc.components.headers)) assert.ok((header as { description: string }).description, name);
    for (const [name, scheme] of Object.entries(doc.components.securitySchemes)) assert.ok((scheme as { description: string }).description, name);
    const missing: string[] = [];
    const walk = (schema: Record<string, unknown>, at: string) => {
      for (const [prop, sub] of Object.entries((schema.properties ?? {}) as Record<string, Record<string, unknown>>)) {
        if (!sub.description && !sub.$ref) missing.push(`${at}.${prop}`);
        walk(sub, `${at}.${prop}`);
      }
      if (schema.items) walk(schema.items as Record<string, unknown>, `${at}[]`);
      for (const alt of (schema.anyOf ?? []) as Array<Record<string, unknown>>) walk(alt, at);
    };
    // The request schema's descriptions live in core/chat-request-schema.ts; these are ours.
    for (const [name, schema] of Object.entries(doc.components.schemas)) if (name !== 'ChatCompletionRequest') walk(schema, name);
    assert.deepEqual(missing, []);
  });
});

describe('the documented response schemas accept what the gateway answers', () => {
  const auth = () => ({ authorization: `Bearer ${tg.apiKey}` });

  test('a chat completion, its stream chunks, the model list and an error body', async () => {
    const completion = await fetch(`${origin}/api/v1/chat/completions`, {
      method: 'POST', headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    assert.equal(completion.status, 200);
    schemaValidator('ChatCompletion')(await completion.json());

    const stream = await fetch(`${origin}/api/v1/chat/completions`, {
      method: 'POST', headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true, stream_options: { include_usage: true } }),
    });
    assert.equal(stream.status, 200);
    assert.match(stream.headers.get('content-type') ?? '', /^text\/event-stream/);
    const events = (await stream.text()).split('\n\n').filter((e) => e.startsWith('data: ') && e !== 'data: [DONE]');
    assert.ok(events.length > 2);
    const validateChunk = schemaValidator('ChatCompletionChunk');
    for (const event of events) validateChunk(JSON.parse(event.slice('data: '.length)));

    const models = await fetch(`${origin}/api/v1/models`, { headers: auth() });
    assert.equal(models.status, 200);
    schemaValidator('OpenAIModelList')(await models.json());

    const denied = await fetch(`${origin}/api/v1/models`);
    assert.equal(denied.status, 401);
    schemaValidator('Error')(await denied.json());
  });

  test('the account, pricing, model catalog and provider views', async () => {
    const cases: Array<[string, string, number]> = [
      ['/api/account', 'Account', 200],
      ['/api/pricing', 'PricingList', 200],
      ['/api/models', 'ModelList', 200],
      ['/api/providers/openai', 'Provider', 200],
      ['/api/providers/no-such-provider', 'Error', 404],
    ];
    for (const [path, schema, status] of cases) {
      const res = await fetch(`${origin}${path}`, { headers: auth() });
      assert.equal(res.status, status, path);
      const body = (await res.json()) as { data?: unknown[] };
      schemaValidator(schema)(body);
      if (schema.endsWith('List')) assert.ok(body.data!.length > 0, `${path} lists something to check`);
    }
  });
});

describe('GET /api/docs', () => {
  async function page(path: string) {
    const res = await fetch(`${origin}${path}`);
    assert.equal(res.status, 200, path);
    return { res, html: await res.text() };
  }

  test('serves a Swagger UI page that loads only local assets, under a CSP without inline scripts', async () => {
    for (const path of ['/api/docs', '/api/docs/']) {
      const { res, html } = await page(path);
      assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
      const csp = res.headers.get('content-security-policy') ?? '';
      assert.match(csp, /script-src 'self'(;|$)/);
      assert.match(csp, /default-src 'none'/);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.doesNotMatch(html, /<script(?![^>]*\ssrc=)[^>]*>/, 'no inline script');
      const tags = html.match(/<(script|link)\b[^>]*>/g) ?? [];
      assert.ok(tags.length >= 4);
      for (const tag of tags) assert.doesNotMatch(tag, /https?:\/\//, tag);
    }
  });

  test('every asset the page references is served with its content type, and init.js points at the document', async () => {
    const { html } = await page('/api/docs');
    const urls = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    assert.deepEqual(urls.sort(), [
      '/api/docs/favicon-16x16.png', '/api/docs/favicon-32x32.png', '/api/docs/index.css', '/api/docs/init.js',
      '/api/docs/swagger-ui-bundle.js', '/api/docs/swagger-ui-standalone-preset.js', '/api/docs/swagger-ui.css',
    ]);
    const expectedType = (url: string) => (url.endsWith('.css') ? 'text/css; charset=utf-8' : url.endsWith('.js') ? 'text/javascript; charset=utf-8' : 'image/png');
    for (const url of urls) {
      const res = await fetch(`${origin}${url}`);
      assert.equal(res.status, 200, url);
      assert.equal(res.headers.get('content-type'), expectedType(url), url);
      assert.ok(res.headers.get('etag'), url);
      const body = Buffer.from(await res.arrayBuffer());
      if (url === '/api/docs/init.js') {
        assert.match(body.toString(), /url: '\/api\/openapi\.json'/);
        assert.match(body.toString(), /validatorUrl: null/);
      } else {
        assert.ok(body.equals(readFileSync(join(SWAGGER_DIR, url.slice('/api/docs/'.length)))), `${url} is the package's file`);
      }
    }
  });

  test('assets carry cache-control and an ETag that round-trips to 304, gzipped or not', async () => {
    const url = `${origin}/api/docs/swagger-ui-bundle.js`;
    const zipped = await fetch(url, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(zipped.headers.get('content-encoding'), 'gzip');
    assert.equal(zipped.headers.get('cache-control'), 'public, max-age=86400');
    assert.equal(zipped.headers.get('vary'), 'accept-encoding');
    await zipped.arrayBuffer();
    const plain = await fetch(url, { headers: { 'accept-encoding': 'identity' } });
    assert.equal(plain.headers.get('content-encoding'), null);
    assert.equal(Number(plain.headers.get('content-length')), readFileSync(join(SWAGGER_DIR, 'swagger-ui-bundle.js')).length);
    await plain.arrayBuffer();
    for (const etag of [zipped.headers.get('etag')!, plain.headers.get('etag')!]) {
      const again = await fetch(url, { headers: { 'if-none-match': etag } });
      assert.equal(again.status, 304, etag);
      assert.equal(await again.text(), '');
    }
    const stale = await fetch(url, { headers: { 'if-none-match': '"something-else"' } });
    assert.equal(stale.status, 200);
    await stale.arrayBuffer();

    const html = await fetch(`${origin}/api/docs`);
    await html.text();
    assert.equal((await fetch(`${origin}/api/docs`, { headers: { 'if-none-match': html.headers.get('etag')! } })).status, 304);
  });

  test('answers HEAD with the headers and no body', async () => {
    const res = await fetch(`${origin}/api/docs/swagger-ui.css`, { method: 'HEAD', headers: { 'accept-encoding': 'identity' } });
    assert.equal(res.status, 200);
    assert.equal(Number(res.headers.get('content-length')), readFileSync(join(SWAGGER_DIR, 'swagger-ui.css')).length);
    assert.equal(await res.text(), '');
  });

  test('serves nothing outside its allow-list: path traversal and other package files are 404', async () => {
    for (const path of [
      '/api/docs/../../package.json', '/api/docs/%2e%2e/package.json', '/api/docs/%2e%2e%2f%2e%2e%2fpackage.json',
      '/api/docs/..%2f..%2fpackage.json', '/api/docs//etc/passwd', '/api/docs/package.json', '/api/docs/index.html',
      '/api/docs/swagger-ui-bundle.js.map', '/api/docs/swagger-initializer.js',
    ]) {
      const res = await rawGet(path);
      assert.equal(res.status, 404, path);
      assert.doesNotMatch(res.body, /"dependencies"|root:/, path);
      assert.match((JSON.parse(res.body) as { error: { code: string } }).error.code, /^(endpoint_)?not_found$/, path);
    }
  });
});

describe('toJsonSchema2020', () => {
  test('maps draft-07 keywords to their 2020-12 successors and drops Ajv-only ones', () => {
    const cases: Array<[string, Record<string, unknown>, Record<string, unknown>, string?]> = [
      ['definitions and their refs', { definitions: { a: { type: 'string' } }, properties: { x: { $ref: '#/definitions/a' } } }, { $defs: { a: { type: 'string' } }, properties: { x: { $ref: '#/$defs/a' } } }],
      ['refs rebased onto the schema\'s place in a document', { properties: { x: { $ref: '#/definitions/a' } } }, { properties: { x: { $ref: '#/components/schemas/S/$defs/a' } } }, '#/components/schemas/S'],
      ['a property named definitions keeps its name in a ref', { properties: { definitions: { type: 'object' } }, $ref: '#/properties/definitions' }, { properties: { definitions: { type: 'object' } }, $ref: '#/properties/definitions' }],
      ['tuple items', { items: [{ type: 'string' }, { type: 'number' }], additionalItems: false }, { prefixItems: [{ type: 'string' }, { type: 'number' }], items: false }],
      ['list items', { items: { type: 'string' }, additionalItems: false }, { items: { type: 'string' } }],
      ['dependencies', { dependencies: { a: ['b'], c: { required: ['d'] } } }, { dependentRequired: { a: ['b'] }, dependentSchemas: { c: { required: ['d'] } } }],
      ['OpenAPI 3.0 nullable', { type: 'string', nullable: true }, { type: ['string', 'null'] }],
      ['nullable enum', { enum: ['a'], nullable: true }, { enum: ['a', null] }],
      ['Ajv-only keywords and $schema', { $schema: 'http://json-schema.org/draft-07/schema#', type: 'string', errorMessage: 'x', transform: ['trim'] }, { type: 'string' }],
      ['data is copied, not walked', { const: { items: [1] }, default: { definitions: 1 }, enum: [{ nullable: true }] }, { const: { items: [1] }, default: { definitions: 1 }, enum: [{ nullable: true }] }],
      ['boolean subschemas', { additionalProperties: false, anyOf: [true, { not: false }] }, { additionalProperties: false, anyOf: [true, { not: false }] }],
    ];
    for (const [title, input, expected, basePointer] of cases) {
      const before = structuredClone(input);
      assert.deepEqual(toJsonSchema2020(input, basePointer ? { basePointer } : {}), expected, title);
      assert.deepEqual(input, before, `${title}: input untouched`);
    }
  });
});

describe('HTTP validators', () => {
  test('If-None-Match uses weak comparison and accepts lists and *', () => {
    const cases: Array<[string | undefined, boolean]> = [
      ['"a"', true], ['W/"a"', true], ['"b", "a"', true], ['*', true], ['"b"', false], ['a', false], [undefined, false], ['', false],
    ];
    for (const [header, hit] of cases) assert.equal(ifNoneMatchHits(header, ['"a"']), hit, String(header));
  });

  test('Accept-Encoding allows gzip unless its q-value is 0', () => {
    const cases: Array<[string | undefined, boolean]> = [
      ['gzip', true], ['gzip, deflate, br', true], ['br;q=1.0, gzip;q=0.8', true], ['*', true], ['GZIP', true],
      ['gzip;q=0', false], ['gzip;q=0.000', false], ['identity', false], ['deflate, br', false], [undefined, false], ['x-gzip2', false],
    ];
    for (const [header, accepted] of cases) assert.equal(acceptsGzip(header), accepted, String(header));
  });
});
