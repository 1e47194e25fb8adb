/**
 * Reading and validating request bodies: size-capped (413 before reading when `content-length`
 * already exceeds it), parsed once, checked against a compiled JSON Schema. Validation errors name
 * the field as `param` in OpenAI's dotted form (`messages[0].role`).
 */
import type { IncomingMessage } from 'node:http';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { invalidRequest, requestTooLarge } from '../errors.ts';
import type { JsonSchema } from '../json-schema.ts';

/**
 * Reads the whole body, at most `maxBodyBytes`. Throws 413 `request_too_large` (a body that grows past
 * the cap mid-read is dropped and its connection closed), or the stream's error when the client
 * leaves mid-body. Listens for `data` rather than iterating: an async iterator per request cost more
 * than reading a small body.
 */
export function readRequestBody(req: IncomingMessage, maxBodyBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (declared > maxBodyBytes) return Promise.reject(requestTooLarge(maxBodyBytes));
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    const onData = (part: Buffer) => {
      size += part.length;
      if (size <= maxBodyBytes) {
        parts.push(part);
        return;
      }
      cleanup();
      req.destroy();
      reject(requestTooLarge(maxBodyBytes));
    };
    const onEnd = () => {
      cleanup();
      resolve(parts.length === 1 ? parts[0]! : Buffer.concat(parts, size));
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const onClose = () => onError(Object.assign(new Error('The client closed the request before its body ended.'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
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
