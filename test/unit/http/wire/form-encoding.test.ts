// Protects strict form-body parsing: decoding, duplicates as arrays, no prototype pollution, malformed input refused.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { parseForm, RepeatedValues } from '../../../../src/http/wire/form-encoding.ts';
import { HttpError } from '../../../../src/http/failures/http-error.ts';

/** The parsed object as a plain one, so deepEqual does not trip over the missing prototype. */
function plain(body: string): Record<string, string | string[]> {
  return { ...parseForm(body) };
}

function assertMalformed(body: string): void {
  assert.throws(
    () => parseForm(body),
    (error: unknown) => {
      assert.ok(error instanceof HttpError, `${JSON.stringify(body)}: expected an HttpError, got ${String(error)}`);
      assert.equal(error.statusCode, 400, `${JSON.stringify(body)}: wrong status`);
      assert.equal(error.code, 'malformed_body', `${JSON.stringify(body)}: wrong code`);
      return true;
    },
    `${JSON.stringify(body)} was parsed instead of refused`,
  );
}

describe('parseForm', () => {
  test('parses name=value pairs', () => {
    assert.deepEqual(plain('name=Alice&timezone=Europe%2FParis'), { name: 'Alice', timezone: 'Europe/Paris' });
  });

  test('turns plus into a space and %2B into a plus', () => {
    assert.deepEqual(plain('name=Ann+Lee'), { name: 'Ann Lee' });
    assert.deepEqual(plain('name=1%2B1'), { name: '1+1' });
    assert.deepEqual(plain('first+name=x'), { 'first name': 'x' });
  });

  test('percent-decodes UTF-8 in names and values', () => {
    assert.deepEqual(plain('name=J%C3%BCrgen%20%E2%9C%93'), { name: 'Jürgen ✓' });
    assert.deepEqual(plain('name=%F0%9F%98%80'), { name: '😀' });
    assert.deepEqual(plain('n%61me=x'), { name: 'x' });
    assert.deepEqual(plain('name=a%26b%3Dc'), { name: 'a&b=c' }, 'encoded & and = must not split the pair');
  });

  test('accepts non-ASCII characters sent without percent-encoding', () => {
    assert.deepEqual(plain('name=Zoë'), { name: 'Zoë' });
  });

  test('keeps empty values and parameters without =', () => {
    assert.deepEqual(plain('name='), { name: '' });
    assert.deepEqual(plain('name'), { name: '' });
  });

  test('keeps a value containing a further =', () => {
    assert.deepEqual(plain('name=a=b'), { name: 'a=b' });
  });

  test('turns a parameter given twice into RepeatedValues, in order', () => {
    const values = (body: string, name: string) => {
      const value = parseForm(body)[name];
      assert.ok(value instanceof RepeatedValues, `${name} in ${body} should be RepeatedValues`);
      return [...value];
    };
    assert.deepEqual(values('name=a&name=b', 'name'), ['a', 'b']);
    assert.deepEqual(values('name=a&x=1&name=b&name=c', 'name'), ['a', 'b', 'c']);
    assert.equal(parseForm('name=a&x=1&name=b&name=c').x, '1');
    assert.deepEqual(values('name=&name=', 'name'), ['', ''], 'two empty values are still a duplicate');
  });

  test('returns an empty object for an empty body', () => {
    const result = parseForm('');
    assert.equal(typeof result, 'object');
    assert.deepEqual(Object.keys(result), []);
  });

  test('ignores empty pairs from stray ampersands', () => {
    assert.deepEqual(plain('&name=a&&'), { name: 'a' });
  });

  test('treats __proto__ as an ordinary own parameter and does not pollute Object.prototype', () => {
    const result = parseForm('__proto__=x&constructor=y&name=a');
    assert.ok(Object.hasOwn(result, '__proto__'), '__proto__ is not an own parameter');
    assert.equal(result['__proto__'], 'x');
    assert.ok(Object.hasOwn(result, 'constructor'), 'constructor is not an own parameter');
    assert.equal(result['constructor'], 'y');
    assert.deepEqual(Object.keys(result).sort(), ['__proto__', 'constructor', 'name']);
    const probe: Record<string, unknown> = {};
    assert.equal(probe.x, undefined, 'Object.prototype gained a property');
    assert.equal(Object.getPrototypeOf(probe), Object.prototype);
  });

  test('does not pollute Object.prototype through bracketed or repeated __proto__', () => {
    parseForm('__proto__[polluted]=yes&__proto__=a&__proto__=b&__proto__.polluted=yes');
    assert.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype.polluted was set');
    assert.equal(Object.hasOwn(Object.prototype, 'polluted'), false);
  });

  test('refuses invalid percent-encoding with 400 malformed_body', () => {
    for (const body of ['name=%', 'name=%2', 'name=%zz', 'name=100%', '%=x', 'na%GGme=x']) assertMalformed(body);
  });

  test('refuses percent-encoded bytes that are not UTF-8 with 400 malformed_body', () => {
    for (const body of ['name=%FF', 'name=%C3', 'name=J%FCrgen', 'name=%E2%9C', 'name=%C0%AF', 'name=%ED%A0%80', '%FF=x']) {
      assertMalformed(body);
    }
  });
});
