// Seals the admin port's kept answers (they may hold a new API key or webhook secret) with a key only the caller can rebuild.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { AnswerSealing } from '../http/writes/idempotency.ts';

const IV_BYTES = 12;
const TAG_BYTES = 16;
const INFO = 'account-api admin idempotent answer v1';

/**
 * AES-256-GCM under a key derived (HKDF-SHA256) from the admin token the request presented and the Idempotency-Key. The
 * database keeps only the token's hash, so a copy of it (a backup) cannot read a kept answer; the retry, which presents the
 * same token and key, can. Stored as IV, tag, ciphertext.
 */
export const adminAnswerSealing: AnswerSealing = {
  seal(request, key, body) {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', keyOf(request, key), iv);
    const sealed = Buffer.concat([cipher.update(body), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), sealed]);
  },
  open(request, key, body) {
    const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    const decipher = createDecipheriv('aes-256-gcm', keyOf(request, key), bytes.subarray(0, IV_BYTES));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
  },
};

/** The request has been authenticated by then: its Authorization is `Bearer <the admin token>`. */
function keyOf(request: FastifyRequest, idempotencyKey: string): Buffer {
  const token = /^\S+ +(\S+)/.exec(request.headers.authorization ?? '')?.[1];
  if (token === undefined) throw new Error('an admin answer was sealed or opened for a request without its admin token');
  return Buffer.from(hkdfSync('sha256', token, idempotencyKey, INFO, 32));
}
