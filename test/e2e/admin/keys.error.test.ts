// Bad input to the admin API's keys gets the right failure and issues nothing.
import assert from 'node:assert/strict';
import type { CallResult } from '../../support/http.ts';
import { expectData, expectFailure, onEveryEngine } from './admin-support.ts';

type Key = { key_id: string; expires_at: string | null; revoked_at: string | null; rolled_into: string | null };

/** Neither revoked nor expired, by the test's clock. */
function live(key: Key): boolean {
  return key.revoked_at === null && (key.expires_at === null || Date.parse(key.expires_at) > Date.now());
}

onEveryEngine('admin keys: errors', ({ suite: { test, before }, admin }) => {
  before(async () => {
    expectData(await admin().call('POST', '/accounts', { form: { username: 'alice' } }), 201);
  });

  test('a scope other than read or write is 400 invalid_scope; a bad or past expiry is 400 invalid_expiry', async () => {
    expectFailure(await admin().call('POST', '/accounts/alice/keys', { form: { scope: 'admin' } }), 400, 'invalid_scope');
    expectFailure(await admin().call('POST', '/accounts/alice/keys', { form: { expires_at: 'tomorrow' } }), 400, 'invalid_expiry');
    expectFailure(await admin().call('POST', '/accounts/alice/keys', { form: { expires_at: '2001-01-01T00:00:00Z' } }), 400, 'invalid_expiry');
    expectFailure(await admin().call('POST', '/accounts/alice/keys', { form: { label: 'x'.repeat(101) } }), 400, 'invalid_label');
    expectFailure(await admin().call('POST', '/accounts/alice/keys', { form: { owner: 'bob' } }), 400, 'unknown_parameter');
    assert.deepEqual(expectData(await admin().call('GET', '/accounts/alice/keys')), [], 'a refused request issued a key');
  });

  test('keys of an unknown account are 404 account_not_found', async () => {
    expectFailure(await admin().call('POST', '/accounts/nobody/keys', {}), 404, 'account_not_found');
    expectFailure(await admin().call('GET', '/accounts/nobody/keys'), 404, 'account_not_found');
  });

  test('a key id of the wrong shape is 400 invalid_key_id; an unknown one is 404 key_not_found', async () => {
    expectFailure(await admin().call('DELETE', '/keys/short'), 400, 'invalid_key_id');
    expectFailure(await admin().call('POST', '/keys/short/roll'), 400, 'invalid_key_id');
    expectFailure(await admin().call('DELETE', '/keys/000000000000'), 404, 'key_not_found');
    expectFailure(await admin().call('POST', '/keys/000000000000/roll'), 404, 'key_not_found');
  });

  test('rolling a revoked key is 409 key_inactive; a bad overlap is 400 invalid_duration', async () => {
    const issued = expectData(await admin().call('POST', '/accounts/alice/keys', {}), 201);
    expectFailure(await admin().call('POST', `/keys/${issued.key_id}/roll`, { form: { overlap: 'soon' } }), 400, 'invalid_duration');
    expectData(await admin().call('DELETE', `/keys/${issued.key_id}`));
    expectFailure(await admin().call('POST', `/keys/${issued.key_id}/roll`), 409, 'key_inactive');
  });

  test('rolling a key rolled already is 409 key_already_rolled naming its successor, and issues nothing', async () => {
    const issued = expectData(await admin().call('POST', '/accounts/alice/keys', {}), 201);
    const rolled = expectData(await admin().call('POST', `/keys/${issued.key_id}/roll`));
    const before = expectData(await admin().call('GET', '/accounts/alice/keys'));
    const refused = expectFailure(await admin().call('POST', `/keys/${issued.key_id}/roll`), 409, 'key_already_rolled');
    assert.ok(refused.message.includes(`'${rolled.successor.key_id}'`), `the refusal should name the successor: ${refused.message}`);
    assert.equal(refused.field, 'key_id');
    assert.deepEqual(expectData(await admin().call('GET', '/accounts/alice/keys')), before, 'a refused roll changed or issued a key');
  });

  test('6 rolls of one key at once: one succeeds, 5 are 409 key_already_rolled naming its successor; one live successor', async () => {
    expectData(await admin().call('POST', '/accounts', { form: { username: 'racer' } }), 201);
    const issued = expectData(await admin().call('POST', '/accounts/racer/keys', {}), 201);
    const answers: CallResult[] = await Promise.all(Array.from({ length: 6 }, () => admin().call('POST', `/keys/${issued.key_id}/roll`)));
    const won = answers.filter((answer) => answer.status === 200);
    assert.equal(won.length, 1, `${won.length} of 6 concurrent rolls succeeded: ${answers.map((answer) => answer.status).join(' ')}`);
    const successor = expectData(won[0]!).successor.key_id as string;
    for (const answer of answers.filter((each) => each !== won[0])) {
      const refused = expectFailure(answer, 409, 'key_already_rolled');
      assert.ok(refused.message.includes(`'${successor}'`), `a refusal should name the winner's successor ${successor}: ${refused.message}`);
    }
    const keys: Key[] = expectData(await admin().call('GET', '/accounts/racer/keys'));
    assert.deepEqual(keys.filter(live).map((key) => key.key_id).sort(), [issued.key_id, successor].sort(), 'live keys besides the original and its one successor');
    const rolls = expectData(await admin().call('GET', '/audit?username=racer')).filter((entry: { action: string }) => entry.action === 'key.rolled');
    assert.equal(rolls.length, 1, 'a refused roll was recorded');
  });
});
