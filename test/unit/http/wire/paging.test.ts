// Cursor paging's rules: limits 1..100, cursors opaque and bound to their list.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeCursor, decodeEndpointCursor, encodeCursor, encodeEndpointCursor, nextCursor, pageLimit } from '../../../../src/http/wire/paging.ts';

test('limit defaults to 50 and takes whole numbers from 1 to 100 only', () => {
  assert.equal(pageLimit(undefined), 50);
  assert.equal(pageLimit('1'), 1);
  assert.equal(pageLimit('100'), 100);
  for (const bad of ['0', '101', '1.5', ' 5', '-1', '', '1e2']) assert.throws(() => pageLimit(bad), { code: 'invalid_limit' }, bad);
});

test('a cursor decodes to the id it was made from, and only for its own list', () => {
  assert.equal(decodeCursor('accounts', encodeCursor('accounts', 42)), 42);
  assert.equal(decodeCursor('audit', undefined), null);
  assert.throws(() => decodeCursor('audit', encodeCursor('accounts', 42)), { code: 'invalid_cursor' });
  for (const bad of ['', '!!', 'YQ', Buffer.from('a-1').toString('base64url'), 'x'.repeat(50)]) {
    assert.throws(() => decodeCursor('accounts', bad), { code: 'invalid_cursor' }, bad);
  }
});

test('a page one row short of the store read is the last; a full one points after its last row', () => {
  assert.deepEqual(nextCursor('accounts', [{ id: 1 }, { id: 2 }], 2, (row) => row.id), { page: [{ id: 1 }, { id: 2 }], next: null });
  const { page, next } = nextCursor('accounts', [{ id: 1 }, { id: 2 }, { id: 3 }], 2, (row) => row.id);
  assert.deepEqual(page, [{ id: 1 }, { id: 2 }]);
  assert.equal(decodeCursor('accounts', next!), 2);
});

test("a webhook endpoints cursor holds the last endpoint's creation instant and id, and only those", () => {
  const position = { createdAt: '2026-11-26T06:00:00.123Z', endpointId: 'we_3kTqv9ZbW2aXcD4e5f6g' };
  assert.deepEqual(decodeEndpointCursor(encodeEndpointCursor(position)), position);
  assert.equal(decodeEndpointCursor(undefined), null);
  for (const bad of [
    encodeCursor('accounts', 42),
    Buffer.from('w2026-02-30T00:00:00.000Z|we_abc').toString('base64url'),
    Buffer.from('w2026-11-26T06:00:00Z|we_abc').toString('base64url'),
    Buffer.from('w2026-11-26T06:00:00.000Z|key_abc').toString('base64url'),
    'x'.repeat(101),
  ]) {
    assert.throws(() => decodeEndpointCursor(bad), { code: 'invalid_cursor' }, bad);
  }
  assert.throws(() => decodeCursor('accounts', encodeEndpointCursor(position)), { code: 'invalid_cursor' }, 'nor is it an accounts cursor');
});
