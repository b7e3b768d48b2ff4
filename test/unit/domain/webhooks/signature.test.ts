// Our signatures verify with the standardwebhooks package, and a changed body, id or secret does not.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { newSigningSecret, signedHeaders } from '../../../../src/domain/webhooks/signature.ts';

test('a signed delivery verifies with the standardwebhooks package', () => {
  const secret = newSigningSecret();
  assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  const body = JSON.stringify({ id: 'evt_1', type: 'account.updated', created_at: new Date().toISOString(), data: {} });
  const headers = signedHeaders(secret, 'evt_1', body, new Date());
  assert.deepEqual(new Webhook(secret).verify(body, headers), JSON.parse(body));
});

test('a tampered body, another id or another secret fails verification', () => {
  const secret = newSigningSecret();
  const body = '{"id":"evt_1"}';
  const headers = signedHeaders(secret, 'evt_1', body, new Date());
  assert.throws(() => new Webhook(secret).verify('{"id":"evt_2"}', headers));
  assert.throws(() => new Webhook(secret).verify(body, { ...headers, 'webhook-id': 'evt_2' }));
  assert.throws(() => new Webhook(newSigningSecret()).verify(body, headers));
});

test('a delivery signed long ago is refused by the receiver’s timestamp check', () => {
  const secret = newSigningSecret();
  const body = '{}';
  assert.throws(() => new Webhook(secret).verify(body, signedHeaders(secret, 'evt_1', body, new Date(Date.now() - 3_600_000))));
});
