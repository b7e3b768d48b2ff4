// Signing secrets sealed at rest under WEBHOOK_SECRETS_KEY: opened with it, refused without it or with another.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { loadConfig } from '../../../../src/config.ts';
import { openSecret, sealSecret } from '../../../../src/domain/webhooks/secret-sealing.ts';
import { newSigningSecret } from '../../../../src/domain/webhooks/signature.ts';

test('a sealed secret holds nothing of the secret, and opens under its key', () => {
  const key = randomBytes(32);
  const secret = newSigningSecret();
  const sealed = sealSecret(secret, key);
  assert.ok(!sealed.includes(secret.slice(6)), 'the stored form shows the secret');
  assert.notEqual(sealSecret(secret, key), sealed, 'each sealing has its own nonce');
  assert.equal(openSecret(sealed, key), secret);
});

test('without a key, secrets are stored and read as they are; a sealed one needs its own key', () => {
  const secret = newSigningSecret();
  assert.equal(sealSecret(secret, null), secret);
  assert.equal(openSecret(secret, randomBytes(32)), secret, 'a secret stored before a key was set still works');
  const sealed = sealSecret(secret, randomBytes(32));
  assert.throws(() => openSecret(sealed, null), (error: any) => error.code === 'webhook_secret_unreadable' && /not set/.test(error.message));
  assert.throws(() => openSecret(sealed, randomBytes(32)), (error: any) => error.code === 'webhook_secret_unreadable' && /not the key/.test(error.message));
});

test('WEBHOOK_SECRETS_KEY must be 32 bytes of base64', () => {
  const key = randomBytes(32).toString('base64');
  assert.deepEqual(loadConfig({ WEBHOOK_SECRETS_KEY: key }, {}, '/tmp').webhooks.secretsKey, Buffer.from(key, 'base64'));
  assert.equal(loadConfig({}, {}, '/tmp').webhooks.secretsKey, null);
  assert.throws(() => loadConfig({ WEBHOOK_SECRETS_KEY: 'short' }, {}, '/tmp'), /WEBHOOK_SECRETS_KEY/);
});
