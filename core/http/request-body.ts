/**
 * Reading and validating request bodies: size-capped (413 before reading when `content-length`
 * already exceeds it), the bytes being read at once capped process-wide (`BodyBytesInFlight`), parsed
 * once (a large body on a worker thread, `json-parse-worker.ts`), checked against a compiled JSON
 * Schema. Validation errors name the field as `param` in OpenAI's dotted form (`messages[0].role`).
 */
import type { IncomingMessage } from 'node:http';
import { Worker } from 'node:worker_threads';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { bodiesInFlightFull, bodiesInFlightFullForCaller, invalidRequest, requestTooLarge, type GatewayError } from '../errors.ts';
import type { JsonSchema } from '../json-schema.ts';

/**
 * The bytes of request bodies held at once by the whole process, at most `maxBytes`: 20 bodies of
 * 32 MiB read together once took 2.5 GB and froze the event loop for seconds. A body holds its bytes
 * from before it is read until it is parsed (`BodyHold.release`). Each principal (a gateway user; a
 * client address before authentication) holds at most `maxBytesPerPrincipal` of them: a body counts
 * its declared `content-length` before a byte arrives, so without a share one caller declaring eight
 * 32 MiB bodies and sending nothing refused every other caller's body until its connections timed out.
 */
export interface BodyBytesInFlight {
  readonly maxBytes: number;
  readonly maxBytesPerPrincipal: number;
  /** Bytes held now. */
  readonly bytes: number;
  /** A new hold of 0 bytes for one body of `principal` (`user:<id>`, `address:<ip>`). */
  hold(principal: string): BodyHold;
}

/** One body's share of `BodyBytesInFlight`. */
export interface BodyHold {
  /**
   * Takes `bytes` more; null when taken, else (nothing taken) the 503 `bodies_in_flight_full` to answer:
   * the process's cap, or the principal's share, would be passed.
   */
  grow(bytes: number): GatewayError | null;
  /** Gives back everything held. Idempotent. */
  release(): void;
}

/** Creates the process-wide count, capped at `maxBytes`, each principal at `maxBytesPerPrincipal` (default `maxBytes`). */
export function createBodyBytesInFlight(maxBytes: number, maxBytesPerPrincipal = maxBytes): BodyBytesInFlight {
  let bytes = 0;
  /** Bytes held per principal; a principal holding none has no entry. */
  const byPrincipal = new Map<string, number>();
  return {
    maxBytes,
    maxBytesPerPrincipal,
    get bytes() {
      return bytes;
    },
    hold(principal) {
      let held = 0;
      return {
        grow(more) {
          const principalBytes = byPrincipal.get(principal) ?? 0;
          if (principalBytes + more > maxBytesPerPrincipal) return bodiesInFlightFullForCaller(maxBytesPerPrincipal);
          if (bytes + more > maxBytes) return bodiesInFlightFull(maxBytes);
          bytes += more;
          held += more;
          byPrincipal.set(principal, principalBytes + more);
          return null;
        },
        release() {
          if (held === 0) return;
          bytes -= held;
          const left = (byPrincipal.get(principal) ?? 0) - held;
          if (left > 0) byPrincipal.set(principal, left);
          else byPrincipal.delete(principal);
          held = 0;
        },
      };
    },
  };
}

/**
 * Reads the whole body, at most `maxBodyBytes`. Throws 413 `request_too_large` (a body that grows past
 * the cap mid-read is dropped and its connection closed), or the stream's error when the client
 * leaves mid-body or has already left (the request destroyed while the exchange awaited before its
 * body: then no event would ever come, so it is refused before any byte is taken). With a `hold`,
 * the body's bytes are taken from the process's `BodyBytesInFlight` before they are read (its
 * declared `content-length` at once, else chunk by chunk); when they do not fit in the process's cap
 * or its principal's share, throws 503 `bodies_in_flight_full` (mid-read: the body is dropped as
 * above). The caller releases the hold. Listens for `data` rather than iterating: an async iterator
 * per request cost more than reading a small body.
 */
export function readRequestBody(req: IncomingMessage, maxBodyBytes: number, hold?: BodyHold): Promise<Buffer> {
  // A client that left while the exchange awaited before its body (a slot in `beforeBody`, a key
  // lookup) fires no more `data`/`end`/`close`: listening now would wait for ever, holding the bytes
  // and the caller's slot. The server destroys the request when its socket closes, in the same
  // `close` that marks the response closed (`socket.destroyed` alone may run ahead of both).
  if (req.destroyed) return Promise.reject(clientLeft());
  const declared = Number(req.headers['content-length']);
  if (declared > maxBodyBytes) return Promise.reject(requestTooLarge(maxBodyBytes));
  const declaredHeld = hold && declared > 0 ? declared : 0;
  const refused = declaredHeld > 0 ? hold!.grow(declaredHeld) : null;
  if (refused) return Promise.reject(refused);
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    const onData = (part: Buffer) => {
      size += part.length;
      const refusal = size > maxBodyBytes ? requestTooLarge(maxBodyBytes) : !hold || size <= declaredHeld ? null : hold.grow(part.length);
      if (!refusal) {
        parts.push(part);
        return;
      }
      cleanup();
      req.destroy();
      reject(refusal);
    };
    const onEnd = () => {
      cleanup();
      resolve(parts.length === 1 ? parts[0]! : Buffer.concat(parts, size));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const onClose = () => onError(clientLeft());
    function cleanup(): void {
      req.removeListener('data', onData);
      req.removeListener('end', onEnd);
      req.removeListener('error', onError);
      req.removeListener('close', onClose);
    }
    // Stays after cleanup: a request dropped here may still emit an error, which unheard would crash.
    req.on('error', ignoreLateError);
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

function ignoreLateError(): void {}

/** The error of a body whose client left before it ended (as a stream's premature close). */
function clientLeft(): Error {
  return Object.assign(new Error('The client closed the request before its body ended.'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
}

/**
 * How deeply arrays and objects may nest in a request body. Real bodies stay under ~15 (a tool's JSON
 * Schema inside a tool inside `tools`); the validator and the translators recurse, so a body nested
 * 10,000 deep would overflow the stack (a 500) instead of being refused.
 */
export const MAX_JSON_DEPTH = 64;

/** Parses JSON. Throws 400 `invalid_request` with the parser's reason, or when it nests deeper than `MAX_JSON_DEPTH`. */
export function parseJsonBody(raw: Buffer): unknown {
  if (raw.length === 0) throw invalidRequest('The request body is empty; send a JSON object.');
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch (err) {
    throw invalidRequest(`The request body is not valid JSON (${(err as Error).message}).`);
  }
  if (jsonDepthExceeds(value, MAX_JSON_DEPTH)) {
    throw invalidRequest(`The request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`);
  }
  return value;
}

/** Bodies from this size on are parsed on a worker thread: below it a parse takes under ~2 ms. */
export const PARSE_OFF_THREAD_BYTES = 1024 * 1024;

/** A body for the parse worker (`json-parse-worker.ts`): its UTF-8, the buffer transferred. */
export interface JsonParseRequest {
  id: number;
  bytes: Uint8Array;
}

/** The parse worker's answer to one `JsonParseRequest`. */
export type JsonParseReply = { id: number; value: unknown } | { id: number; error: string } | { id: number; tooDeep: true };

/** Parse workers: enough to keep big bodies moving on the 2 to 4 cores a gateway usually gets. */
const PARSE_WORKERS = 2;

interface ParseWorker {
  worker: Worker;
  pending: Map<number, { resolve(value: unknown): void; reject(err: unknown): void }>;
}

const parseWorkers: ParseWorker[] = [];
let parseSeq = 0;

/**
 * Parses JSON like `parseJsonBody` (same errors), on one of a small pool of reused worker threads when
 * `raw` has `PARSE_OFF_THREAD_BYTES` or more, so the event loop stays free for other requests. `raw`'s
 * memory is handed to the worker: do not use it afterwards.
 */
export function parseJsonBodyOffThread(raw: Buffer): Promise<unknown> {
  if (raw.length < PARSE_OFF_THREAD_BYTES) {
    try {
      return Promise.resolve(parseJsonBody(raw));
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
  }
  const target = idlestParseWorker();
  const id = ++parseSeq;
  // Transfer, not copy: a Buffer that owns its whole ArrayBuffer (a large concat) moves for free.
  const owned = raw.byteOffset === 0 && raw.byteLength === raw.buffer.byteLength ? raw : Buffer.from(raw);
  return new Promise((resolve, reject) => {
    target.pending.set(id, { resolve, reject });
    target.worker.postMessage({ id, bytes: owned } satisfies JsonParseRequest, [owned.buffer as ArrayBuffer]);
  });
}

/**
 * Stops the parse workers (the gateway's close, and tests): a worker started from source through tsx
 * keeps its process alive although unref'd, so a process that is done must end them. The next big
 * body starts a new pool.
 */
export async function closeParseWorkers(): Promise<void> {
  const workers = parseWorkers.splice(0);
  await Promise.all(workers.map((entry) => entry.worker.terminate()));
}

function idlestParseWorker(): ParseWorker {
  if (parseWorkers.length < PARSE_WORKERS) return startParseWorker();
  return parseWorkers.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
}

/**
 * Starts a parse worker: `dist/json-parse-worker.js` beside the bundle (`bin/build.js` builds both), or
 * the TypeScript source through tsx when running from source (as `core/admin/logs-csv.ts` does). Unref'd:
 * an idle pool never keeps the process alive. A worker that dies fails its pending parses with a 500
 * and is replaced by the next parse.
 */
function startParseWorker(): ParseWorker {
  let worker: Worker;
  if (!import.meta.url.endsWith('.ts')) {
    worker = new Worker(new URL('./json-parse-worker.js', import.meta.url));
  } else {
    const source = new URL('./json-parse-worker.ts', import.meta.url).href;
    const boot = `import { register } from ${JSON.stringify(import.meta.resolve('tsx/esm/api'))}; register(); await import(${JSON.stringify(source)});`;
    worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(boot)}`));
  }
  worker.unref();
  const entry: ParseWorker = { worker, pending: new Map() };
  parseWorkers.push(entry);
  worker.on('message', (reply: JsonParseReply) => {
    const waiting = entry.pending.get(reply.id);
    if (!waiting) return;
    entry.pending.delete(reply.id);
    if ('value' in reply) waiting.resolve(reply.value);
    else if ('error' in reply) waiting.reject(invalidRequest(`The request body is not valid JSON (${reply.error}).`));
    else waiting.reject(invalidRequest(`The request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep.`));
  });
  const fail = (err: unknown) => {
    const at = parseWorkers.indexOf(entry);
    if (at >= 0) parseWorkers.splice(at, 1);
    for (const waiting of entry.pending.values()) waiting.reject(err instanceof Error ? err : new Error(`JSON parse worker exited (${String(err)})`));
    entry.pending.clear();
  };
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`JSON parse worker exited with code ${code}`)));
  return entry;
}

/** Whether `value` nests arrays/objects deeper than `maxDepth` (a top-level object is depth 1). Iterative: no recursion to overflow. */
export function jsonDepthExceeds(value: unknown, maxDepth: number): boolean {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const item = stack.pop()!;
    if (typeof item.value !== 'object' || item.value === null) continue;
    const depth = item.depth + 1;
    if (depth > maxDepth) return true;
    const children = Array.isArray(item.value) ? item.value : Object.values(item.value);
    for (const child of children) if (typeof child === 'object' && child !== null) stack.push({ value: child, depth });
  }
  return false;
}

/** `/messages/0/role` → `messages[0].role` */
export function pointerToParam(pointer: string): string {
  let param = '';
  for (const segment of pointer.split('/').slice(1)) {
    const key = segment.replace(/~1/g, '/').replace(/~0/g, '~');
    param += /^\d+$/.test(key) ? `[${key}]` : param ? `.${key}` : key;
  }
  return param;
}

function describeError(error: ErrorObject): { message: string; param: string | null } {
  if (error.keyword === 'required') {
    const field = pointerToParam(`${error.instancePath}/${(error.params as { missingProperty: string }).missingProperty}`);
    return { message: `Missing required field "${field}".`, param: field };
  }
  const field = pointerToParam(error.instancePath);
  if (!field) return { message: `The request body ${error.message ?? 'is invalid'}.`, param: null };
  if (error.keyword === 'enum') {
    const allowed = (error.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ');
    return { message: `Invalid value for "${field}": must be one of ${allowed}.`, param: field };
  }
  return { message: `Invalid value for "${field}": ${error.message ?? 'invalid'}.`, param: field };
}

/** Path segments of the field an error is about (`/messages/0/content/1` → 4). */
function depthOf(error: ErrorObject): number {
  return error.instancePath.split('/').length + (error.keyword === 'required' ? 1 : 0);
}

/** Compilations not done yet (`compileBodyValidators` runs them). */
const uncompiled = new Set<() => void>();

/**
 * Compiles every body validator created so far. The gateway calls it at start, so no request pays
 * for a compilation; a CLI command that validates no body never compiles one (they are most of its
 * start-up time).
 */
export function compileBodyValidators(): void {
  for (const compile of uncompiled) compile();
}

/**
 * A checker of `schema` that throws 400 `invalid_request` naming the first bad field. Compiled on
 * first use or by `compileBodyValidators`, whichever comes first.
 */
export function createBodyValidator<T>(schema: JsonSchema): (value: unknown) => T {
  let validate: ValidateFunction | null = null;
  const compile = () => {
    validate ??= new Ajv({ allErrors: false, strict: false }).compile(schema);
    uncompiled.delete(compile);
    return validate;
  };
  uncompiled.add(compile);
  return (value: unknown): T => {
    const check = validate ?? compile();
    if (check(value)) return value as T;
    const errors = check.errors ?? [];
    // A nullable field fails both anyOf branches; the useful error is the non-null branch's. Of a
    // union's branches (content: string or parts) the one that got deepest names the real fault.
    const useful = errors.filter((e) => e.keyword !== 'anyOf' && e.keyword !== 'if' && !(e.keyword === 'type' && e.params.type === 'null'));
    const error = useful.reduce<ErrorObject | undefined>((best, e) => (best && depthOf(best) >= depthOf(e) ? best : e), undefined) ?? errors[0];
    if (!error) throw invalidRequest('The request body is invalid.');
    const { message, param } = describeError(error);
    throw invalidRequest(message, param);
  };
}
