// Test support for Idempotency-Key on the admin API: what a replay and a burst of concurrent requests with one key must look like.
import assert from 'node:assert/strict';
import type { CallResult } from '../../support/http.ts';
import { expectFailure } from './admin-support.ts';

/** The first answer again, byte for byte, saying it is a replay; the request id is the new request's own. */
export function assertReplayOf(replay: CallResult, first: CallResult, what: string): void {
  assert.equal(replay.status, first.status, `${what}: the replay's status differs: ${replay.text}`);
  assert.equal(replay.text, first.text, `${what}: the replay is not the first answer byte for byte`);
  assert.equal(replay.headers.get('content-type'), first.headers.get('content-type'), `${what}: the replay's Content-Type differs`);
  assert.equal(replay.headers.get('idempotent-replayed'), 'true', `${what}: the replay does not say Idempotent-Replayed: true`);
  assert.equal(first.headers.get('idempotent-replayed'), null, `${what}: the first answer says it is a replay`);
  assert.notEqual(replay.headers.get('x-request-id'), first.headers.get('x-request-id'), `${what}: the replay reused the first request id`);
}

/** Of concurrent requests with one key: exactly one ran (`status`); each other was 409 idempotency_key_in_use or its replay. */
export function assertRanOnce(results: readonly CallResult[], status: number): CallResult {
  const ran = results.filter((result) => result.status === status && result.headers.get('idempotent-replayed') === null);
  assert.equal(ran.length, 1, `${ran.length} requests ran: ${results.map((result) => result.status).join(', ')}`);
  for (const result of results) {
    if (result === ran[0]) continue;
    if (result.status === 409) expectFailure(result, 409, 'idempotency_key_in_use');
    else assertReplayOf(result, ran[0]!, 'a concurrent request');
  }
  return ran[0]!;
}
