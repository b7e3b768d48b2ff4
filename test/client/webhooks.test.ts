// The client's verifyWebhook accepts what the server signs and refuses what it did not, as standardwebhooks does.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { verifyWebhook, WebhookVerificationError, type WebhookEvent, type WebhookEventType } from '../../client/src/index.ts';
import type { operations } from './openapi-v0.generated.ts';
import { WEBHOOK_EVENT_TYPES } from '../../src/domain/webhooks/events.ts';
import { newSigningSecret, signedHeaders } from '../../src/domain/webhooks/signature.ts';

const body = JSON.stringify({ id: 'evt_1', type: 'key.revoked', created_at: '2026-11-23T00:00:00.000Z', data: { object: null, changes: {} } });

test('verifyWebhook returns the event of a genuine delivery, as standardwebhooks does', () => {
  const secret = newSigningSecret();
  const headers = signedHeaders(secret, 'evt_1', body, new Date());
  const event = verifyWebhook(secret, body, headers);
  assert.equal(event.type, 'key.revoked');
  assert.deepEqual(event, new Webhook(secret).verify(body, headers));
  assert.deepEqual(verifyWebhook(secret, Buffer.from(body), new Headers(headers)), event, 'a Buffer body and fetch Headers work too');
});

test('verifyWebhook refuses another secret, a changed body, an old timestamp and a missing header', () => {
  const secret = newSigningSecret();
  const headers = signedHeaders(secret, 'evt_1', body, new Date());
  assert.throws(() => verifyWebhook(newSigningSecret(), body, headers), WebhookVerificationError);
  assert.throws(() => verifyWebhook(secret, body.replace('key.revoked', 'key.created'), headers), WebhookVerificationError);
  assert.throws(() => verifyWebhook(secret, body, signedHeaders(secret, 'evt_1', body, new Date(Date.now() - 600_000))), /too old/);
  assert.throws(() => verifyWebhook(secret, body, { ...headers, 'webhook-signature': undefined }), /webhook-signature/);
});

test("the client's event types are the server's", () => {
  const clientTypes: Record<WebhookEventType, true> = {
    'account.created': true,
    'account.updated': true,
    'account.premium_changed': true,
    'account.deleted': true,
    'key.created': true,
    'key.rolled': true,
    'key.revoked': true,
  };
  assert.deepEqual(Object.keys(clientTypes).sort(), [...WEBHOOK_EVENT_TYPES].sort());
});

// At compile time: the client's event types and the OpenAPI document's webhooks (as openapi-typescript reads them) agree.
const documentedUpdate = null as unknown as operations['webhook_account_updated']['requestBody']['content']['application/json'];
const documentedRevoke = null as unknown as operations['webhook_key_revoked']['requestBody']['content']['application/json'];
const asClientUpdate: WebhookEvent<'account.updated'> = documentedUpdate;
const asClientRevoke: WebhookEvent<'key.revoked'> = documentedRevoke;
void asClientUpdate;
void asClientRevoke;
