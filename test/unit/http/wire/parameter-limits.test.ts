// Protects the body parameter caps: how parameters are counted and how a value's length is measured (code points).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { parseForm } from '../../../../src/http/wire/form-encoding.ts';
import { HttpError } from '../../../../src/http/failures/http-error.ts';
import { checkParameterLimits } from '../../../../src/http/wire/parameter-limits.ts';

const LIMITS = { maxParameters: 3, maxParameterLength: 5 };

function refusal(body: unknown): { code: string; field: string | undefined } | null {
  try {
    checkParameterLimits(body, LIMITS);
    return null;
  } catch (error) {
    assert.ok(error instanceof HttpError && error.statusCode === 400, `expected a 400 HttpError, got ${String(error)}`);
    return { code: error.code, field: error.field };
  }
}

test('accepts a body at the limits', () => {
  assert.equal(refusal({ a: '12345', b: 'x', c: '' }), null);
});

test('refuses more parameters than the limit, counting a repeated form parameter once per value', () => {
  assert.deepEqual(refusal({ a: '1', b: '2', c: '3', d: '4' }), { code: 'too_many_parameters', field: undefined });
  assert.deepEqual(refusal(parseForm('a=1&a=2&a=3&a=4')), { code: 'too_many_parameters', field: undefined });
});

test('measures values in code points, so an emoji counts once', () => {
  assert.equal(refusal({ name: '😀😀😀😀😀' }), null, 'five emoji are five code points (ten UTF-16 units)');
  assert.deepEqual(refusal({ name: '😀😀😀😀😀😀' }), { code: 'parameter_too_long', field: 'name' });
  assert.deepEqual(refusal(parseForm('name=1&name=123456')), { code: 'parameter_too_long', field: 'name' });
});

test('leaves bodies that are not parameter objects, and values that are not strings, to validation', () => {
  for (const body of [undefined, null, 'text', [1, 2, 3, 4, 5], { a: 1234567, b: { deep: 'x'.repeat(100) } }]) {
    assert.equal(refusal(body), null, `${JSON.stringify(body)} was refused by the parameter caps`);
  }
});
