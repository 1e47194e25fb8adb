/** The error catalog (core/errors.ts): one declaration per code, used by every factory. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as errors from '../../core/errors.ts';
import { ERROR_CATALOG, GatewayError, gatewayError, type ErrorCode } from '../../core/errors.ts';
import * as sessionErrors from '../../core/admin/session-errors.ts';

describe('error catalog', () => {
  test('every catalog code builds an error with its status, type, default message and headers', () => {
    for (const code of Object.keys(ERROR_CATALOG) as ErrorCode[]) {
      const spec = ERROR_CATALOG[code];
      const err = gatewayError(code);
      assert.equal(err.code, code);
      assert.equal(err.status, spec.status, code);
      assert.equal(err.type, spec.type, code);
      assert.equal(err.message, spec.message, code);
      assert.deepEqual(err.headers, { ...('headers' in spec ? spec.headers : {}) }, code);
      assert.equal(err.param, 'param' in spec ? spec.param : null, code);
    }
  });

  test('a call site\'s message, param and headers win over the defaults, the catalog headers stay', () => {
    const err = gatewayError('invalid_request', { message: 'bad "x"', param: 'x', headers: { 'x-extra': '1' } });
    assert.deepEqual(err.toBody(), { error: { message: 'bad "x"', type: 'invalid_request_error', code: 'invalid_request', param: 'x' } });
    assert.deepEqual(err.headers, { 'x-should-retry': 'false', 'x-extra': '1' });
    assert.equal(gatewayError('model_not_found', { param: null }).param, null);
  });

  test('every named factory emits a catalog code with the catalog\'s type', () => {
    const made: GatewayError[] = [
      errors.invalidApiKey(), errors.permissionDenied('no'), errors.budgetExceeded('spent'), errors.rateLimitExceeded('slow', 1500),
      errors.providerNotFound('acme', ['openai']), errors.modelNotFound('m'), errors.invalidRequest('bad'), errors.requestTooLarge(10),
      errors.providerNotConfigured('openai'), errors.upstreamTimeout('openai', 'headers'), errors.routeNotFound('GET', '/x'),
      errors.methodNotAllowed('GET', '/x', 'POST'), errors.shuttingDown(), errors.internalError(), sessionErrors.sessionRequired(),
      sessionErrors.invalidCredentials(), sessionErrors.tooManyLoginAttempts(1000), sessionErrors.originMismatch(), errors.conflict('dup'),
      errors.resourceNotFound('user_not_found', 'gone'), errors.upstreamError({ status: 502, message: 'down' }),
    ];
    for (const err of made) {
      const spec = ERROR_CATALOG[err.code as ErrorCode];
      assert.ok(spec, `${err.code} is declared`);
      assert.equal(err.type, spec.type, err.code);
    }
    assert.deepEqual(errors.rateLimitExceeded('slow', 1500).headers, { 'retry-after': '2', 'retry-after-ms': '1500' });
  });

  test('an unknown throw becomes internal_error and keeps its cause for the log only', () => {
    const cause = new Error('secret detail');
    const err = errors.toGatewayError(cause);
    assert.equal(err.code, 'internal_error');
    assert.equal(err.cause, cause);
    assert.doesNotMatch(JSON.stringify(err.toBody()), /secret detail/);
  });

  test('a database that is unavailable now becomes store_unavailable (503, retry-after); a bad query stays internal_error', () => {
    const unavailable = [
      Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }),
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
      new Error('Connection terminated unexpectedly'),
      Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }),
      Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }),
      Object.assign(new Error('attempt to write a readonly database'), { code: 'SQLITE_READONLY' }),
    ];
    for (const cause of unavailable) {
      const err = errors.toGatewayError(cause);
      assert.equal(err.code, 'store_unavailable', cause.message);
      assert.equal(err.status, 503);
      assert.equal(err.headers['retry-after'], '1');
      assert.equal(err.cause, cause);
      assert.doesNotMatch(JSON.stringify(err.toBody()), /5432|readonly|administrator/);
    }
    for (const cause of [Object.assign(new Error('duplicate key'), { code: '23505' }), Object.assign(new Error('constraint'), { code: 'SQLITE_CONSTRAINT_UNIQUE' })]) {
      assert.equal(errors.toGatewayError(cause).code, 'internal_error', cause.message);
    }
  });
});
