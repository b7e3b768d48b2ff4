// No function under src/ takes more than four parameters (issue 37): past four, a call is a row of values only their order
// explains. The functions that did when the check came are listed below, each at its count; the list may only shrink.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { findLongParameterLists, findLongParameterListsUnder } from '../support/long-parameter-lists.ts';

const SRC = join(import.meta.dirname, '../../src');
const MOST = 4;

/**
 * `file: name` of each function that took more than MOST parameters when this check came, with the count it had then.
 * Give one an options object (or split it) and take it off the list; never add one. src/http/auth/authenticate.ts is not
 * here: its per-request attempt object (issue 37) replaced lists of up to eight.
 */
const GRANDFATHERED: ReadonlyMap<string, number> = new Map([
  ['http/auth/admin-auth.ts: judged', 5],
  ['cli/run-cli.ts: reportFailure', 5],
  ['config.ts: integer', 5],
  ['console/views.ts: ConsoleViews.send', 5],
  ['domain/webhooks/events.ts: eventBody', 5],
  ['http/limits/rate-limits.ts: judgeCharge', 5],
  ['http/observability/lazy-child-logger.ts: LazyChildLogger.constructor', 5],
  ['http/observability/metrics-listener.ts: sendJson', 5],
  ['http/wire/envelope-schemas.ts: failureEnvelopeSchema', 5],
  ['http/writes/account-writes.ts: answerAccountWrite', 5],
  ['operations/accounts.ts: changeTimezone', 5],
  ['operations/webhooks.ts: sendWebhookTestEvent', 5],
  ['store/accounts/postgres.ts: PostgresAccounts.#setPremium', 5],
  ['store/accounts/postgres.ts: PostgresAccounts.#updateAccount', 5],
  ['store/accounts/postgres.ts: PostgresAccounts.#updateChecked', 5],
  ['store/accounts/sqlite.ts: updateAccount', 6],
  ['store/accounts/sqlite.ts: SqliteAccounts.#queueUpdate', 5],
  ['store/audit/time-partitions.ts: deleteRowsBefore', 5],
  ['store/webhooks/postgres.ts: claimDeliveries', 5],
  ['store/webhooks/sqlite.ts: updateEndpointEnabled', 5],
  ['store/webhooks/sqlite.ts: claimDeliveries', 5],
]);

describe('the checker', () => {
  const planted = [
    'export function five(a: number, b: number, c: number, d: number, e: number): void {}',
    'export function four(this: Window, a: number, b: number, c: number, d: number): void {}',
    'export const arrow = (a: 1, b: 2, c: 3, d: 4, e: 5, f: 6) => a;',
    'class Attempt { constructor(a: 1, b: 2, c: 3, d: 4, e: 5) {} #step(a: 1, b: 2, c: 3, d: 4, e: 5) {} }',
    'const table = { row: function (a: 1, b: 2, c: 3, d: 4, e: 5) {} };',
    'setTimeout((a: 1, b: 2, c: 3, d: 4, e: 5) => a);',
    'export type Signature = (a: 1, b: 2, c: 3, d: 4, e: 5) => void;',
    'export declare function declared(a: 1, b: 2, c: 3, d: 4, e: 5): void;',
  ].join('\n');

  test('finds every kind of function with a body past the limit, by the name a reader looks for, and counts no `this`', () => {
    const found = findLongParameterLists('planted.ts', planted, MOST).map(({ name, line, parameters }) => `${name} ${parameters} :${line}`);
    assert.deepEqual(found, [
      'five 5 :1',
      'arrow 6 :3',
      'Attempt.constructor 5 :4',
      'Attempt.#step 5 :4',
      'row 5 :5',
      '(anonymous function) 5 :6',
    ]);
  });
});

describe('the functions of src/', () => {
  const found = findLongParameterListsUnder(SRC, MOST);

  test(`take at most ${MOST} parameters, but for the grandfathered few, and those no more than they did`, () => {
    const offenders = found
      .filter(({ file, name, parameters }) => parameters > (GRANDFATHERED.get(`${file}: ${name}`) ?? MOST))
      .map(({ file, name, line, parameters }) => `${file}:${line} ${name} takes ${parameters}`);
    assert.deepEqual(offenders, [], `more than ${MOST} parameters: hand the values in as one object (authenticate.ts's attempt is an example)`);
  });

  test('leave no grandfathered entry behind once its function is fixed, so the list only shrinks', () => {
    const still = new Set(found.map(({ file, name }) => `${file}: ${name}`));
    const fixed = [...GRANDFATHERED.keys()].filter((entry) => !still.has(entry));
    assert.deepEqual(fixed, [], 'these take no more than four parameters now (or are gone): delete them from GRANDFATHERED');
  });
});
