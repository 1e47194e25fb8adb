/**
 * Which endpoint, service name and switch win (docs/tracing.md "Turning it on"): the manifest's
 * `tracing` section over the standard OTEL_* environment, tracing off without either.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveTracing } from '../../../core/telemetry/tracing-settings.ts';

const defaults = { sampleRatio: 1, capturePrompts: false, captureMaxChars: 8192, exportDelayMs: 5000 };

test('without a section or an OTEL endpoint tracing is off', () => {
  assert.equal(resolveTracing(undefined, {}), null);
  assert.equal(resolveTracing(defaults, { OTEL_SERVICE_NAME: 'x' }), null);
});

test('the traces endpoint is used as is; the base endpoint gets /v1/traces', () => {
  assert.equal(resolveTracing(defaults, { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/custom' })?.url, 'http://c:4318/custom');
  assert.equal(resolveTracing(defaults, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' })?.url, 'http://c:4318/v1/traces');
  assert.equal(resolveTracing(defaults, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t/v1/traces' })?.url, 'http://t/v1/traces');
});

test('the manifest wins over the environment, which fills what it leaves out', () => {
  const env = { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://env/v1/traces', OTEL_SERVICE_NAME: 'from-env' };
  const both = resolveTracing({ ...defaults, otlpEndpoint: 'http://manifest/v1/traces', serviceName: 'from-manifest' }, env);
  assert.deepEqual([both?.url, both?.serviceName], ['http://manifest/v1/traces', 'from-manifest']);
  const filled = resolveTracing({ ...defaults, otlpEndpoint: 'http://manifest/v1/traces' }, env);
  assert.equal(filled?.serviceName, 'from-env');
  assert.equal(resolveTracing({ ...defaults, otlpEndpoint: 'http://m/v1/traces' }, {})?.serviceName, 'tollgate');
});

test('enabled: false or OTEL_SDK_DISABLED=true turns it off whatever names an endpoint', () => {
  assert.equal(resolveTracing({ ...defaults, enabled: false, otlpEndpoint: 'http://m/v1/traces' }, {}), null);
  assert.equal(resolveTracing({ ...defaults, enabled: false }, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c' }), null);
  assert.equal(resolveTracing({ ...defaults, otlpEndpoint: 'http://m/v1/traces' }, { OTEL_SDK_DISABLED: 'TRUE' }), null);
  assert.notEqual(resolveTracing({ ...defaults, otlpEndpoint: 'http://m/v1/traces' }, { OTEL_SDK_DISABLED: 'false' }), null);
});
