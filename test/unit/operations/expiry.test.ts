// Key lifetimes as operators write them: which durations and instants are accepted, and the bounds.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { DomainError } from '../../../src/domain/errors.ts';
import { MAX_LIFETIME_MS, parseDuration, parseExpiry } from '../../../src/operations/expiry.ts';

const NOW = Date.parse('2026-11-23T12:00:00.000Z');
const code = (expected: string) => (error: unknown) => error instanceof DomainError && error.code === expected;

test('durations are a whole number of days, hours or minutes', () => {
  assert.equal(parseDuration('90d', 'expires_in'), 90 * 86_400_000);
  assert.equal(parseDuration('12h', 'expires_in'), 12 * 3_600_000);
  assert.equal(parseDuration('30m', 'expires_in'), 30 * 60_000);
  for (const bad of ['90x', '1w', '1.5h', '-1d', 'd', '', ' 1d', '1D', '0']) {
    assert.throws(() => parseDuration(bad, 'expires_in'), code('invalid_duration'), `'${bad}' was accepted as a duration`);
  }
});

test('an overlap may be 0, a lifetime may not; neither may pass 10 years', () => {
  assert.equal(parseDuration('0', 'overlap', { zero: true }), 0);
  assert.equal(parseDuration('0h', 'overlap', { zero: true }), 0);
  assert.throws(() => parseDuration('0d', 'expires_in'), code('invalid_duration'));
  assert.throws(() => parseDuration('3653d', 'expires_in'), /longer than 10 years/);
  assert.ok(parseDuration('3652d', 'expires_in') <= MAX_LIFETIME_MS);
});

test('an instant is ISO 8601 with a zone, or a date alone (midnight UTC), in the future and within 10 years', () => {
  assert.equal(parseExpiry('2027-03-01', NOW).toISOString(), '2027-03-01T00:00:00.000Z');
  assert.equal(parseExpiry('2027-03-01T12:00:00+02:00', NOW).toISOString(), '2027-03-01T10:00:00.000Z');
  assert.equal(parseExpiry('2027-03-01T12:00Z', NOW).toISOString(), '2027-03-01T12:00:00.000Z');
  for (const bad of ['2027-03-01T12:00:00', 'next tuesday', '2027-13-01', '1700000000', '']) {
    assert.throws(() => parseExpiry(bad, NOW), code('invalid_expiry'), `'${bad}' was accepted as an instant`);
  }
  assert.throws(() => parseExpiry('2026-11-23T11:59:59Z', NOW), /in the past/);
  assert.throws(() => parseExpiry('2026-11-23T12:00:00Z', NOW), /in the past/, 'now itself is not in the future');
  assert.throws(() => parseExpiry('2036-11-24T12:00:00Z', NOW), /more than 10 years/);
});

test('a day the month lacks is refused, not moved on to the next month as Date.parse would', () => {
  for (const bad of ['2027-02-29', '2027-02-30', '2027-04-31', '2027-04-31T10:00:00Z', '2027-06-00']) {
    assert.throws(() => parseExpiry(bad, NOW), code('invalid_expiry'), `'${bad}' was accepted`);
  }
  assert.throws(() => parseExpiry('2027-02-30', NOW), /not a day of the calendar/);
  assert.equal(parseExpiry('2028-02-29', NOW).toISOString(), '2028-02-29T00:00:00.000Z', 'a leap day is a day');
});
