// Protects how the OTEL_* variables are read (src/config.ts): what an operator sets is what is used, or refused at start.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, loadConfig } from '../../../src/config.ts';

const base = { DATABASE_URL: 'sqlite::memory:' };

test('the endpoint gets /v1/traces appended; the service name and the sampler have defaults', () => {
  assert.deepEqual(loadConfig({ ...base, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing, {
    tracesUrl: 'http://collector:4318/v1/traces',
    serviceName: 'account-api',
    sampler: 'parentbased_always_on',
    sampleRatio: 1,
  });
});

test('OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER and its ratio are taken as given', () => {
  const tracing = loadConfig({
    ...base,
    OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example.com/otlp',
    OTEL_SERVICE_NAME: 'accounts-eu',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.25',
  }).tracing;
  assert.deepEqual(tracing, { tracesUrl: 'https://otel.example.com/otlp/v1/traces', serviceName: 'accounts-eu', sampler: 'parentbased_traceidratio', sampleRatio: 0.25 });
});

test('without OTEL_EXPORTER_OTLP_ENDPOINT the other OTEL_ variables change nothing', () => {
  assert.equal(loadConfig({ ...base, OTEL_SERVICE_NAME: 'x', OTEL_TRACES_SAMPLER: 'nonsense' }).tracing, null);
});

test('a wrong endpoint, sampler or ratio is refused at start, naming the variable', () => {
  const endpoint = 'http://collector:4318';
  for (const [env, variable] of [
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://collector:4317' }, 'OTEL_EXPORTER_OTLP_ENDPOINT'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_SAMPLER: 'jaeger_remote' }, 'OTEL_TRACES_SAMPLER'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_SAMPLER_ARG: '1.5' }, 'OTEL_TRACES_SAMPLER_ARG'],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_SAMPLER_ARG: 'half' }, 'OTEL_TRACES_SAMPLER_ARG'],
  ] as const) {
    assert.throws(() => loadConfig({ ...base, ...env }), (error) => error instanceof ConfigError && error.message.startsWith(variable), JSON.stringify(env));
  }
});
