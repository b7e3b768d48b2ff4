// Protects the two shapes of the response envelope: success, and fail (4xx) / error (5xx).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { failure, success } from '../../../../src/http/wire/envelope.ts';

describe('success envelope', () => {
  test('wraps data with status success, no messages and empty meta', () => {
    const data = { user_id: 1, username: 'alice', name: 'Alice', timezone: 'UTC' };
    assert.deepEqual(success(data), { status: 'success', messages: [], meta: {}, data });
  });

  test('carries meta when an endpoint has some', () => {
    const meta = { description: 'Data is a list of valid timezones.' };
    assert.deepEqual(success(['UTC'], meta), { status: 'success', messages: [], meta, data: ['UTC'] });
  });

  test('has exactly the four envelope keys', () => {
    assert.deepEqual(Object.keys(success('x')).sort(), ['data', 'messages', 'meta', 'status']);
  });

  test('survives JSON serialisation unchanged', () => {
    const envelope = success({ name: 'World' });
    assert.deepEqual(JSON.parse(JSON.stringify(envelope)), { status: 'success', messages: [], meta: {}, data: { name: 'World' } });
  });
});

describe('failure envelope', () => {
  const message = { code: 'missing_parameter', message: "The parameter 'name' is required.", field: 'name' };

  for (const status of [400, 401, 403, 404, 405, 409, 413, 415, 499]) {
    test(`is "fail" for ${status}`, () => {
      assert.deepEqual(failure(status, [message]), { status: 'fail', messages: [message], meta: {}, data: null });
    });
  }

  for (const status of [500, 502, 503, 599]) {
    test(`is "error" for ${status}`, () => {
      const internal = { code: 'internal_error', message: 'Something went wrong.' };
      assert.deepEqual(failure(status, [internal]), { status: 'error', messages: [internal], meta: {}, data: null });
    });
  }

  test('keeps every message in order, with or without a field', () => {
    const messages = [message, { code: 'invalid_name', message: 'The name must not be empty.' }];
    const envelope = failure(400, messages);
    assert.deepEqual(envelope.messages, messages);
    assert.equal(Object.hasOwn(envelope.messages[1]!, 'field'), false, 'a message without a field gained one');
  });

  test('has data null, not absent, after JSON serialisation', () => {
    const parsed = JSON.parse(JSON.stringify(failure(404, [{ code: 'not_found', message: 'No such path.' }]))) as Record<string, unknown>;
    assert.ok(Object.hasOwn(parsed, 'data'), 'data is missing from the serialised failure');
    assert.equal(parsed.data, null);
    assert.deepEqual(parsed.meta, {});
  });
});
