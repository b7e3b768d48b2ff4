// Checks a webhook delivery as the Standard Webhooks specification says, and returns its event, typed.
import { createHmac, timingSafeEqual } from 'node:crypto';

export type WebhookEventType =
  | 'account.created'
  | 'account.updated'
  | 'account.premium_changed'
  | 'account.deleted'
  | 'key.created'
  | 'key.rolled'
  | 'key.revoked';

export interface WebhookAccount {
  readonly user_id: number;
  readonly username: string;
  readonly name: string;
  readonly timezone: string;
  readonly premium: boolean;
  /** null in account.deleted */
  readonly created_at: string | null;
}

export interface WebhookKey {
  readonly key_id: string;
  readonly username: string;
  readonly label: string | null;
  readonly prefix: string;
  readonly scope: 'read' | 'write';
  readonly created_at: string;
  readonly expires_at: string | null;
  readonly revoked_at: string | null;
  readonly rolled_into: string | null;
}

export interface WebhookFieldChange {
  readonly old: string | number | boolean | null;
  readonly new: string | number | boolean | null;
}

export interface WebhookEvent<T extends WebhookEventType = WebhookEventType> {
  /** The same on every attempt: deduplicate by it. */
  readonly id: string;
  readonly type: T;
  readonly created_at: string;
  readonly data: {
    readonly object: (T extends `key.${string}` ? WebhookKey : WebhookAccount) | null;
    readonly changes: Readonly<Record<string, WebhookFieldChange>>;
  };
}

export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError';
}

export interface VerifyWebhookOptions {
  /** How far webhook-timestamp may be from the clock, in seconds (default 300). */
  readonly toleranceSeconds?: number;
  readonly now?: Date;
}

type HeaderBag = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

function header(headers: HeaderBag, name: string): string {
  const value = headers instanceof Headers ? headers.get(name) : headers[name];
  const text = Array.isArray(value) ? value[0] : value;
  if (typeof text !== 'string' || text === '') throw new WebhookVerificationError(`The delivery has no ${name} header.`);
  return text;
}

/**
 * The event of a delivery whose signature is the endpoint's and whose timestamp is recent; throws WebhookVerificationError
 * otherwise. `body` is the raw body, exactly as received (verify before parsing).
 */
export function verifyWebhook(secret: string, body: string | Uint8Array, headers: HeaderBag, options: VerifyWebhookOptions = {}): WebhookEvent {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000);
  if (!/^\d+$/.test(timestamp) || Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300)) {
    throw new WebhookVerificationError('The delivery is too old or too new (webhook-timestamp).');
  }
  const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${text}`).digest();
  // Several signatures may be sent (while a secret is rotated): one match is enough.
  const matches = signatures.split(' ').some((entry) => {
    const [version, signature] = entry.split(',', 2);
    if (version !== 'v1' || signature === undefined) return false;
    const given = Buffer.from(signature, 'base64');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!matches) throw new WebhookVerificationError('The delivery’s signature does not match the secret.');
  return JSON.parse(text) as WebhookEvent;
}
