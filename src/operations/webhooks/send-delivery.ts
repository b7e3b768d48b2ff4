// One delivery attempt: a signed POST to the checked address only, within 10 s, no redirect followed; what came back.
import { request as httpRequest, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { checkedAddress, parseWebhookUrl, type Resolve, resolveHost } from './address-check.ts';
import { signedHeaders } from '../../domain/webhooks/signature.ts';
import { DELIVERY_TIMEOUT_MS } from '../../domain/webhooks/retry-schedule.ts';

/** The User-Agent of every delivery and test event, so a receiver's logs tell them from other traffic. */
export function webhookUserAgent(version: string): string {
  return `account-api-webhooks/${version}`;
}

/** How much of an answer is kept for `webhooks deliveries`. */
export const RESPONSE_EXCERPT_BYTES = 256;

export interface SendResult {
  readonly status: number | null;
  readonly latencyMs: number;
  readonly response: string | null;
  readonly error: string | null;
  readonly succeeded: boolean;
}

export interface SendOptions {
  readonly url: string;
  readonly secret: string;
  readonly eventId: string;
  readonly body: string;
  readonly allowPrivate: boolean;
  readonly userAgent: string;
  readonly timeoutMs?: number;
  readonly resolve?: Resolve;
  readonly now?: () => Date;
}

/** Never rejects: every failure is a result, recorded as the attempt's. */
export async function sendDelivery(options: SendOptions): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  const failed = (error: string): SendResult => ({ status: null, latencyMs: elapsed(), response: null, error, succeeded: false });
  let url: URL;
  let pinned: { address: string; family: 4 | 6 };
  try {
    url = parseWebhookUrl(options.url);
    // Checked again at every attempt: an address that changed since `webhooks add` is refused now.
    pinned = await checkedAddress(url, options.allowPrivate, options.resolve ?? resolveHost);
  } catch (error) {
    return failed((error as Error).message);
  }
  // The connection goes to the address just checked, whatever a second resolution would say (DNS rebinding).
  const lookup: LookupFunction = (_host, lookupOptions, callback) => {
    if ((lookupOptions as { all?: boolean }).all === true) (callback as (e: null, a: { address: string; family: number }[]) => void)(null, [pinned]);
    else callback(null, pinned.address, pinned.family);
  };
  const headers = {
    ...signedHeaders(options.secret, options.eventId, options.body, (options.now ?? (() => new Date()))()),
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(options.body)),
    'user-agent': options.userAgent,
  };
  const timeoutMs = options.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const signal = AbortSignal.timeout(timeoutMs);
  const requestOptions: RequestOptions = {
    method: 'POST',
    headers,
    lookup,
    signal,
    agent: false,
  };
  return new Promise<SendResult>((done) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    let settled = false;
    const request = send(url, requestOptions, (response) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      const timedOut = () => finish(null);
      // The status and the excerpt are all that is kept, so the answer is read no further: a receiver that streams (or dribbles)
      // a long body would otherwise hold a socket and a slot of WEBHOOK_CONCURRENCY until the time limit.
      const finish = (error: string | null) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', timedOut);
        response.destroy();
        const status = response.statusCode ?? null;
        const text = Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8');
        done({ status, latencyMs: elapsed(), response: text, error, succeeded: error === null && status !== null && status >= 200 && status < 300 });
      };
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        kept += chunk.length;
        if (kept >= RESPONSE_EXCERPT_BYTES) finish(null);
      });
      response.on('end', () => finish(null));
      response.on('error', (error) => finish(describe(error, timeoutMs)));
      // The status came in time and only the rest of the excerpt did not: the answer is that status, with what arrived of it.
      signal.addEventListener('abort', timedOut, { once: true });
    });
    request.on('error', (error) => {
      if (settled) return;
      settled = true;
      done(failed(describe(error, timeoutMs)));
    });
    request.end(options.body);
  });
}

function describe(error: Error, timeoutMs: number): string {
  if (error.name === 'TimeoutError' || error.name === 'AbortError') return `no answer within ${timeoutMs} ms`;
  const code = (error as { code?: string }).code;
  return code === undefined ? error.message : `${code}: ${error.message}`;
}
