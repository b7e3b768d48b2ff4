// Webhook signing secrets at rest: sealed with AES-256-GCM under WEBHOOK_SECRETS_KEY when the operator sets one.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { DomainError } from '../errors.ts';

const SEALED = 'sealed:v1:';

/** The stored form of `secret`: sealed under `key` when there is one, else the secret itself. */
export function sealSecret(secret: string, key: Buffer | null): string {
  if (key === null) return secret;
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return `${SEALED}${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64')}`;
}

/**
 * The secret itself. A secret stored before a key was set is read as it is; a sealed one needs the key it was sealed under
 * (webhook_secret_unreadable otherwise: the delivery fails, and says why, rather than being signed wrongly).
 */
export function openSecret(stored: string, key: Buffer | null): string {
  if (!stored.startsWith(SEALED)) return stored;
  if (key === null) throw unreadable('it is sealed and WEBHOOK_SECRETS_KEY is not set');
  const bytes = Buffer.from(stored.slice(SEALED.length), 'base64');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(12, 28));
    return Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
  } catch {
    throw unreadable('WEBHOOK_SECRETS_KEY is not the key it was sealed under');
  }
}

function unreadable(why: string): DomainError {
  return new DomainError('internal', 'webhook_secret_unreadable', `webhook_secret_unreadable: the endpoint's signing secret cannot be read: ${why}.`);
}
