// Protects loadCallConfig, the settings of `account-api call`: defaults, flags over environment, the sandbox's URL, clear errors.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ConfigError, loadCallConfig } from '../../src/config.ts';

const KEY = 'aapi_live_abc';

test('defaults: the client picks the URL, no credentials, 10 s per attempt, no retries', () => {
  assert.deepEqual(loadCallConfig({}), { baseUrl: undefined, sandbox: false, credentials: null, timeoutMs: 10_000, retries: 0 });
});

test('the environment names the server and the caller', () => {
  const config = loadCallConfig({ ACCOUNT_API_URL: 'https://api.example.test', ACCOUNT_API_USERNAME: 'alice', ACCOUNT_API_KEY: KEY });
  assert.equal(config.baseUrl, 'https://api.example.test');
  assert.deepEqual(config.credentials, { username: 'alice', apiKey: KEY });
});

test('flags win over the environment, one by one', () => {
  const env = { ACCOUNT_API_URL: 'https://env.example.test', ACCOUNT_API_USERNAME: 'alice', ACCOUNT_API_KEY: KEY };
  const config = loadCallConfig(env, { baseUrl: 'http://127.0.0.1:9000', username: 'bob', timeoutMs: '2500', retries: '3' });
  assert.deepEqual(config, {
    baseUrl: 'http://127.0.0.1:9000',
    sandbox: false,
    credentials: { username: 'bob', apiKey: KEY },
    timeoutMs: 2500,
    retries: 3,
  });
});

test('in sandbox mode (--sandbox or ACCOUNT_API_SANDBOX=1) the URL comes from ACCOUNT_API_SANDBOX_URL, not ACCOUNT_API_URL', () => {
  const env = { ACCOUNT_API_URL: 'http://live.example.test', ACCOUNT_API_SANDBOX_URL: 'http://sandbox.example.test' };
  assert.equal(loadCallConfig(env, { sandbox: true }).baseUrl, 'http://sandbox.example.test');
  assert.equal(loadCallConfig({ ...env, ACCOUNT_API_SANDBOX: '1' }).baseUrl, 'http://sandbox.example.test');
  assert.equal(loadCallConfig({ ...env, ACCOUNT_API_SANDBOX: '1' }).sandbox, true);
  assert.equal(loadCallConfig({ ACCOUNT_API_URL: 'http://live.example.test' }, { sandbox: true }).baseUrl, undefined, 'the client default, :8081');
  assert.equal(loadCallConfig(env).baseUrl, 'http://live.example.test');
});

test('empty variables count as unset', () => {
  assert.deepEqual(loadCallConfig({ ACCOUNT_API_URL: '', ACCOUNT_API_USERNAME: '', ACCOUNT_API_KEY: '' }), loadCallConfig({}));
});

test('refuses half the credentials, a colon in the username, a URL that is not http(s), and numbers out of range', () => {
  const cases: Array<[string, () => unknown, RegExp]> = [
    ['a username alone', () => loadCallConfig({ ACCOUNT_API_USERNAME: 'alice' }), /--api-key/],
    ['a key alone', () => loadCallConfig({}, { apiKey: KEY }), /--username/],
    ['a colon in the username', () => loadCallConfig({}, { username: 'a:b', apiKey: KEY }), /:/],
    ['a bare host', () => loadCallConfig({ ACCOUNT_API_URL: 'localhost:8080' }), /ACCOUNT_API_URL/],
    ['another scheme', () => loadCallConfig({}, { baseUrl: 'ftp://example.test' }), /--base-url/],
    ['a zero timeout', () => loadCallConfig({}, { timeoutMs: '0' }), /--timeout-ms/],
    ['a word for retries', () => loadCallConfig({}, { retries: 'many' }), /--retries/],
    ['too many retries', () => loadCallConfig({}, { retries: '11' }), /--retries/],
  ];
  for (const [what, load, names] of cases) {
    assert.throws(load, (error: unknown) => error instanceof ConfigError && names.test(error.message), `${what} should be refused naming ${names}`);
  }
});
