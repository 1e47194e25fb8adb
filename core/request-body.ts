/**
 * Reading and validating request bodies: size-capped (413 before reading when `content-length`
 * already exceeds it), parsed once, checked against a compiled JSON Schema. Validation errors name
 * the field as `param` in OpenAI's dotted form (`messages[0].role`).
 */
import type { IncomingMessage } from 'node:http';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { invalidRequest, requestTooLarge } from './errors.ts';
import type { JsonSchema } from './json-schema.ts';

/** Reads the whole body, at most `maxBodyBytes`. Throws 413 `request_too_large`. */
export async function readRequestBody(req: IncomingMessage, maxBodyBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (declared > maxBodyBytes) throw requestTooLarge(maxBodyBytes);
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of req as AsyncIterable<Buffer>) {
    size += part.length;
    if (size > maxBodyBytes) throw requestTooLarge(maxBodyBytes);
    parts.push(part);
  }
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts, size);
}

/** Parses JSON. Throws 400 `invalid_request` with the parser's reason. */
export function parseJsonBody(raw: Buffer): unknown {
  if (raw.length === 0) throw invalidRequest('The request body is empty; send a JSON object.');
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch (err) {
    throw invalidRequest(`The request body is not valid JSON (${(err as Error).message}).`);
  }
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

/** Compiles `schema` into a checker that throws 400 `invalid_request` naming the first bad field. */
export function createBodyValidator<T>(schema: JsonSchema): (value: unknown) => T {
  const ajv = new Ajv({ allErrors: false, strict: false });
  const validate: ValidateFunction = ajv.compile(schema);
  return (value: unknown): T => {
    if (validate(value)) return value as T;
    const errors = validate.errors ?? [];
    // A nullable field fails both anyOf branches; the useful error is the non-null branch's.
    const error = errors.find((e) => e.keyword !== 'anyOf' && !(e.keyword === 'type' && e.params.type === 'null')) ?? errors[0];
    if (!error) throw invalidRequest('The request body is invalid.');
    const { message, param } = describeError(error);
    throw invalidRequest(message, param);
  };
}
