// The environment variables config.ts reads are exactly ENVIRONMENT_VARIABLES (which docs/operations.md's table must list), and
// SANDBOX_URL is listed in the OpenAPI document only when an operator set it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, ENVIRONMENT_VARIABLES, loadCallConfig, loadConfig, type Environment } from '../../src/config.ts';

/** An environment that records every name read from it. */
function recording(values: Record<string, string>, read: Set<string>): Environment {
  return new Proxy(values, {
    get(target, name) {
      if (typeof name === 'string') read.add(name);
      return target[name as string];
    },
  }) as Environment;
}

test('config.ts reads exactly the variables ENVIRONMENT_VARIABLES lists, no more and no fewer', () => {
  const read = new Set<string>();
  // Some names are read only when another is set (the sandbox's database, the tracing settings, Redis's key prefix, the
  // sandbox's URL for call): one run without anything, one with those switches on.
  const switchedOn = {
    ACCOUNT_API_SANDBOX: '1',
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318',
    REDIS_URL: 'redis://127.0.0.1:6379',
  };
  for (const values of [{}, switchedOn]) {
    loadConfig(recording(values, read), {}, '/srv/account-api');
    loadCallConfig(recording(values, read));
  }
  const listed = new Set<string>(ENVIRONMENT_VARIABLES);
  assert.equal(listed.size, ENVIRONMENT_VARIABLES.length, 'ENVIRONMENT_VARIABLES names a variable twice');
  const unlisted = [...read].filter((name) => !listed.has(name)).sort();
  const unread = [...listed].filter((name) => !read.has(name)).sort();
  assert.deepEqual(unlisted, [], `config.ts reads variables ENVIRONMENT_VARIABLES does not list: ${unlisted.join(', ')}`);
  assert.deepEqual(unread, [], `ENVIRONMENT_VARIABLES lists variables config.ts never reads: ${unread.join(', ')}`);
});

test('without SANDBOX_URL the live document names no sandbox, rather than guess localhost', () => {
  assert.equal(loadConfig({}).sandboxUrl, null);
  assert.equal(loadConfig({ SANDBOX_URL: '' }).sandboxUrl, null);
  assert.equal(loadConfig({ SANDBOX_URL: 'https://sandbox.api.example.com' }).sandboxUrl, 'https://sandbox.api.example.com');
});

test('a SANDBOX_URL that is not an http(s) URL is refused at start, naming the variable', () => {
  for (const value of ['sandbox.example.com', 'ftp://sandbox.example.com', 'http//oops']) {
    assert.throws(
      () => loadConfig({ SANDBOX_URL: value }),
      (error: unknown) => error instanceof ConfigError && /^SANDBOX_URL\b/.test(error.message),
      `SANDBOX_URL=${value} was accepted`,
    );
  }
});
