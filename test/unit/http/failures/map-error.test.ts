// Protects the one error mapper: every thrown value becomes the right status, code, field and headers, and 500s leak nothing.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { DomainError, type FailureKind } from '../../../../src/domain/errors.ts';
import { HttpError } from '../../../../src/http/failures/http-error.ts';
import { mapError } from '../../../../src/http/failures/map-error.ts';
import { parseForm } from '../../../../src/http/wire/form-encoding.ts';

interface ValidationIssue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message?: string;
}

/** What Fastify throws when a request fails its schema: an Error carrying ajv's issues. */
function validationError(issues: ValidationIssue[]): Error {
  return Object.assign(new Error('body/name must be string'), { validation: issues, validationContext: 'body', statusCode: 400 });
}

/** What Fastify throws for its own failures: an Error with a stable FST_ code. */
function fastifyError(code: string, statusCode: number): Error {
  return Object.assign(new Error(`fastify says ${code}`), { code, statusCode });
}

function onlyMessage(mapped: ReturnType<typeof mapError>): { code: string; message: string; field?: string } {
  assert.equal(mapped.messages.length, 1, `expected one message, got ${JSON.stringify(mapped.messages)}`);
  const message = mapped.messages[0]!;
  assert.ok(message.message.length > 0, 'the message is empty');
  return message;
}

describe('domain errors', () => {
  const cases: ReadonlyArray<[FailureKind, number, string]> = [
    ['invalid', 400, 'invalid_name'],
    ['unauthenticated', 401, 'invalid_credentials'],
    ['forbidden', 403, 'premium_required'],
    ['not_found', 404, 'account_not_found'],
    ['conflict', 409, 'username_taken'],
    ['precondition', 412, 'precondition_failed'],
    ['unavailable', 503, 'store_busy'],
  ];
  for (const [kind, status, code] of cases) {
    test(`maps kind ${kind} to ${status} and keeps code and message`, () => {
      const mapped = mapError(new DomainError(kind, code, `A sentence about ${code}.`), undefined);
      assert.equal(mapped.statusCode, status, `kind ${kind} mapped to the wrong status`);
      assert.deepEqual(mapped.messages, [{ code, message: `A sentence about ${code}.` }]);
    });
  }

  test('keeps the field of a domain error', () => {
    const mapped = mapError(new DomainError('invalid', 'invalid_name', 'The name must not be empty.', { field: 'name' }), {});
    assert.deepEqual(mapped.messages, [{ code: 'invalid_name', message: 'The name must not be empty.', field: 'name' }]);
  });

  test('treats caller mistakes and 503 refusals as expected, and only 500 as unexpected', () => {
    assert.equal(mapError(new DomainError('invalid', 'invalid_name', 'x'), undefined).unexpected, false);
    assert.equal(mapError(new DomainError('unavailable', 'store_busy', 'x'), undefined).unexpected, false, 'store_busy is logged with a stack');
    for (const code of ['overloaded', 'shutting_down']) {
      const mapped = mapError(new HttpError(503, code, 'x', { headers: { 'Retry-After': '1' } }), undefined);
      assert.equal(mapped.statusCode, 503);
      assert.equal(mapped.unexpected, false, `${code} is an expected answer, not a bug to log with a stack`);
    }
  });

  test('maps kind internal to 500 internal_error without the internal message', () => {
    const secret = 'SQLITE_CORRUPT at /var/lib/account-api/data.db row 42';
    const mapped = mapError(new DomainError('internal', 'schema_too_new', secret), undefined);
    assert.equal(mapped.statusCode, 500);
    const message = onlyMessage(mapped);
    assert.equal(message.code, 'internal_error');
    assert.ok(!message.message.includes('SQLITE'), `the 500 message leaks internals: ${message.message}`);
    assert.ok(!message.message.includes('schema_too_new'), `the 500 message leaks the internal code: ${message.message}`);
    assert.equal(mapped.unexpected, true);
  });
});

describe('HTTP errors', () => {
  test('pass through with status, code, message and headers', () => {
    const headers = { 'WWW-Authenticate': 'Basic realm="account-api", charset="UTF-8"' };
    const mapped = mapError(new HttpError(401, 'credentials_required', 'Send your username and API key.', { headers }), undefined);
    assert.equal(mapped.statusCode, 401);
    assert.deepEqual(mapped.messages, [{ code: 'credentials_required', message: 'Send your username and API key.' }]);
    assert.deepEqual(mapped.headers, headers, 'the WWW-Authenticate header was lost');
  });

  test('keep the Allow header of a 405 and the field of a 400', () => {
    const allow = mapError(new HttpError(405, 'method_not_allowed', 'Use GET or POST.', { headers: { Allow: 'GET, HEAD, POST' } }), undefined);
    assert.equal(allow.statusCode, 405);
    assert.equal(allow.headers.Allow, 'GET, HEAD, POST');
    const withField = mapError(new HttpError(400, 'malformed_body', 'Bad form.', { field: 'name' }), undefined);
    assert.deepEqual(withField.messages, [{ code: 'malformed_body', message: 'Bad form.', field: 'name' }]);
  });
});

describe('schema validation errors', () => {
  test('a missing property becomes missing_parameter with its field', () => {
    const error = validationError([{ keyword: 'required', instancePath: '', params: { missingProperty: 'timezone' } }]);
    const mapped = mapError(error, {});
    assert.equal(mapped.statusCode, 400);
    const message = onlyMessage(mapped);
    assert.equal(message.code, 'missing_parameter');
    assert.equal(message.field, 'timezone');
  });

  test('an extra property becomes unknown_parameter with its field', () => {
    const error = validationError([{ keyword: 'additionalProperties', instancePath: '', params: { additionalProperty: 'nmae' } }]);
    const mapped = mapError(error, { nmae: 'x' });
    assert.equal(mapped.statusCode, 400);
    const message = onlyMessage(mapped);
    assert.equal(message.code, 'unknown_parameter');
    assert.equal(message.field, 'nmae');
  });

  test('a type error on a form parameter given twice becomes duplicate_parameter', () => {
    const error = validationError([{ keyword: 'type', instancePath: '/name', params: { type: 'string' }, message: 'must be string' }]);
    const mapped = mapError(error, parseForm('name=a&name=b'));
    assert.equal(mapped.statusCode, 400);
    const message = onlyMessage(mapped);
    assert.equal(message.code, 'duplicate_parameter');
    assert.equal(message.field, 'name');
  });

  test('a type error on a non-string value becomes invalid_parameter', () => {
    // A JSON array is a non-string value, not a parameter given twice: only the form parser can repeat one.
    for (const value of [5, true, null, { nested: 'x' }, ['a', 'b']]) {
      const error = validationError([{ keyword: 'type', instancePath: '/name', params: { type: 'string' }, message: 'must be string' }]);
      const mapped = mapError(error, { name: value });
      assert.equal(mapped.statusCode, 400);
      const message = onlyMessage(mapped);
      assert.equal(message.code, 'invalid_parameter', `value ${JSON.stringify(value)} mapped to ${message.code}`);
      assert.equal(message.field, 'name');
    }
  });

  test('a type error on the whole body becomes malformed_body', () => {
    for (const body of [[1, 2], 'text', 42, null]) {
      const error = validationError([{ keyword: 'type', instancePath: '', params: { type: 'object' }, message: 'must be object' }]);
      const mapped = mapError(error, body);
      assert.equal(mapped.statusCode, 400);
      assert.equal(onlyMessage(mapped).code, 'malformed_body', `body ${JSON.stringify(body)} was not malformed_body`);
    }
  });

  test('reports the first problem first when there are several', () => {
    const error = validationError([
      { keyword: 'required', instancePath: '', params: { missingProperty: 'name' } },
      { keyword: 'additionalProperties', instancePath: '', params: { additionalProperty: 'x' } },
    ]);
    const mapped = mapError(error, { x: '1' });
    assert.equal(mapped.statusCode, 400);
    assert.equal(mapped.messages[0]?.code, 'missing_parameter', `first message is ${JSON.stringify(mapped.messages[0])}`);
  });

  test('is not shown to the caller in ajv\'s words', () => {
    const error = validationError([{ keyword: 'type', instancePath: '/name', params: { type: 'string' }, message: 'must be string' }]);
    const message = onlyMessage(mapError(error, { name: 1 }));
    assert.ok(!message.message.includes('body/'), `the message repeats the framework text: ${message.message}`);
  });
});

describe('Fastify errors', () => {
  const cases: ReadonlyArray<[string, number, number, string]> = [
    ['FST_ERR_CTP_BODY_TOO_LARGE', 413, 413, 'body_too_large'],
    ['FST_ERR_CTP_INVALID_MEDIA_TYPE', 415, 415, 'unsupported_media_type'],
    ['FST_ERR_CTP_INVALID_JSON_BODY', 400, 400, 'malformed_body'],
    ['FST_ERR_CTP_EMPTY_JSON_BODY', 400, 400, 'malformed_body'],
  ];
  for (const [code, fastifyStatus, status, ourCode] of cases) {
    test(`${code} becomes ${status} ${ourCode}`, () => {
      const mapped = mapError(fastifyError(code, fastifyStatus), undefined);
      assert.equal(mapped.statusCode, status);
      const message = onlyMessage(mapped);
      assert.equal(message.code, ourCode);
      assert.ok(!message.message.includes('fastify says'), `Fastify's own text leaked: ${message.message}`);
      assert.equal(mapped.unexpected, false, `${code} is the caller's fault, not ours`);
    });
  }

  test('a JSON SyntaxError from the body parser becomes malformed_body', () => {
    const error = Object.assign(new SyntaxError('Unexpected token } in JSON at position 9'), { statusCode: 400 });
    const mapped = mapError(error, undefined);
    assert.equal(mapped.statusCode, 400);
    assert.equal(onlyMessage(mapped).code, 'malformed_body');
  });
});

describe('unexpected errors', () => {
  test('an unknown Error becomes 500 internal_error that does not repeat the error text', () => {
    const original = 'TypeError: Cannot read properties of undefined (reading secret_hash) at /srv/app/src/store.ts:42';
    const mapped = mapError(new Error(original), undefined);
    assert.equal(mapped.statusCode, 500);
    const message = onlyMessage(mapped);
    assert.equal(message.code, 'internal_error');
    assert.equal(message.field, undefined);
    for (const fragment of ['TypeError', 'secret_hash', '/srv/app', 'store.ts', original]) {
      assert.ok(!message.message.includes(fragment), `the 500 message leaks '${fragment}': ${message.message}`);
    }
    assert.equal(mapped.unexpected, true, 'an unknown error must be logged as unexpected');
    assert.deepEqual(mapped.headers, {});
  });

  test('a TypeError, a thrown string, number or plain object all become 500 internal_error', () => {
    for (const thrown of [new TypeError('x is not a function'), 'a string', 42, { weird: true }]) {
      const mapped = mapError(thrown, undefined);
      assert.equal(mapped.statusCode, 500, `${String(thrown)} mapped to ${mapped.statusCode}`);
      assert.equal(onlyMessage(mapped).code, 'internal_error');
    }
  });

  test('a thrown null or undefined becomes 500 internal_error instead of crashing the mapper', () => {
    for (const thrown of [null, undefined]) {
      const mapped = mapError(thrown, undefined);
      assert.equal(mapped.statusCode, 500, `${String(thrown)} mapped to ${mapped.statusCode}`);
      assert.equal(onlyMessage(mapped).code, 'internal_error');
    }
  });
});
