// Protects which X-Request-Id values a client may choose: well-formed ones are kept, anything else (keys above all) replaced.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { issueKey } from '../../../../src/domain/api-keys.ts';
import { requestIdFor } from '../../../../src/http/observability/request-id.ts';

const FRESH = 'fresh-id';
const fresh = () => FRESH;

describe('requestIdFor', () => {
  test('keeps a well-formed id: letters, digits, dot, underscore, colon and hyphen, up to 128 characters', () => {
    for (const id of ['a', 'abc-123', 'trace:span.1_2', '0f8fad5b-d9cb-469f-a165-70867728950e', 'x'.repeat(128)]) {
      assert.equal(requestIdFor(id, fresh), id, `'${id}' was replaced`);
    }
  });

  test('makes a fresh random UUID when the header is absent', () => {
    const first = requestIdFor(undefined);
    assert.match(first, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.notEqual(requestIdFor(undefined), first, 'two requests got the same id');
  });

  test('replaces an empty, too long or ill-formed id', () => {
    for (const id of ['', 'x'.repeat(129), 'has space', 'semi;colon', 'new\nline', 'ünïcode', 'a/b', 'a=b', '<script>', '%41']) {
      assert.equal(requestIdFor(id, fresh), FRESH, `'${id}' was kept`);
    }
  });

  test('replaces the header when it was sent more than once', () => {
    assert.equal(requestIdFor(['one', 'two'], fresh), FRESH);
  });

  test('replaces an id that is, or holds, an API key, since ids are echoed and logged', () => {
    const live = issueKey('live').token;
    const sandbox = issueKey('sandbox').token;
    for (const id of [live, sandbox, `trace:${live}`, live.toUpperCase(), live.slice('aapi_live_'.length)]) {
      assert.equal(requestIdFor(id, fresh), FRESH, `'${id}' was kept`);
    }
  });

  test('replaces base64 of Basic credentials when it happens to look well-formed', () => {
    // Find a username whose "user:key" encodes without '+', '/' or '=' (characters the id pattern refuses).
    const key = issueKey('live').token;
    const encoded = Array.from({ length: 200 }, (_, i) => Buffer.from(`user${i}:${key}`).toString('base64')).find((b64) =>
      /^[A-Za-z0-9]+$/.test(b64),
    );
    assert.ok(encoded !== undefined, 'no clean base64 found to test with');
    assert.equal(requestIdFor(encoded, fresh), FRESH);
  });
});
