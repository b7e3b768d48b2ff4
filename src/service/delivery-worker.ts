// serve's background sender: claims due deliveries under a lease, sends a bounded number at once, records each attempt.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { WebhookSettings } from '../config.ts';
import type { Store } from '../store/store.ts';
import { untraced, type SpanRunner } from '../tracing/tracing.ts';
import { nextAttemptAt } from '../domain/webhooks/retry-schedule.ts';
import { openSecret } from '../domain/webhooks/secret-sealing.ts';
import { sendDelivery, type SendOptions, type SendResult } from '../operations/webhooks/send-delivery.ts';
import type { WebhookMetrics } from './webhook-metrics.ts';
import type { ClaimedDelivery } from '../store/webhooks/webhook-store.ts';

export interface DeliveryWorkerOptions {
  readonly store: Store;
  readonly settings: WebhookSettings;
  /** Resolves when the store first serves. */
  readonly storeReady: Promise<unknown>;
  readonly log: { info(fields: object, message: string): void; warn(fields: object, message: string): void };
  readonly metrics: WebhookMetrics;
  readonly userAgent: string;
  /** Each delivery in a span `webhook.deliver` when tracing is on (src/tracing/); untraced, the work alone. */
  readonly traced?: SpanRunner;
  /** Tests replace the sender. */
  readonly send?: (options: SendOptions) => ReturnType<typeof sendDelivery>;
}

export interface DeliveryWorker {
  /** Stops claiming; waits up to `graceMs` for the deliveries in flight, then lets go of the leases of those still running. */
  stop(graceMs?: number): Promise<void>;
}

/** How often the outbox metrics are refreshed: one count over the pending rows, not one per poll. */
const STATS_EVERY_MS = 5000;

export function startDeliveryWorker(options: DeliveryWorkerOptions): DeliveryWorker {
  const { store, settings, log, metrics } = options;
  const send = options.send ?? sendDelivery;
  const traced = options.traced ?? untraced;
  // Names this process's leases: a lease another process took over after ours expired is never written through.
  const owner = `${hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`;
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  let polling = false;
  let again = false;
  let timer: NodeJS.Timeout | undefined;
  let lastStats = 0;

  /** Never rejects: a secret that cannot be unsealed is the attempt's failure, recorded and visible in `webhooks deliveries`. */
  const sendOnce = async (claim: ClaimedDelivery): Promise<SendResult> => {
    let secret: string;
    try {
      secret = openSecret(claim.secret, settings.secretsKey);
    } catch (error) {
      return { status: null, latencyMs: 0, response: null, error: (error as Error).message, succeeded: false };
    }
    return send({ url: claim.url, secret, eventId: claim.eventId, body: claim.payload, allowPrivate: settings.allowPrivate, userAgent: options.userAgent });
  };

  const attempt = async (claim: ClaimedDelivery): Promise<void> => {
    const attemptedAt = new Date();
    const result = await traced('webhook.deliver', { 'webhook.event_id': claim.eventId, 'url.full': claim.url }, async (span) => {
      const sent = await sendOnce(claim);
      if (sent.status !== null) span.setAttribute('http.response.status_code', sent.status);
      span.setAttribute('webhook.delivered', sent.succeeded);
      return sent;
    });
    const next = result.succeeded ? null : nextAttemptAt(settings.retryScheduleMs, claim.attempts + 1, new Date());
    const { disabled } = await store.recordWebhookAttempt(claim, {
      attemptedAt,
      ...result,
      nextAttemptAt: next,
      disableIfFailingSince: new Date(attemptedAt.getTime() - settings.disableAfterMs),
    });
    metrics.delivered(result.succeeded ? 'succeeded' : next === null ? 'failed' : 'retrying');
    if (!result.succeeded) {
      log.warn(
        { endpointId: claim.endpointId, eventId: claim.eventId, attempt: claim.attempts + 1, status: result.status, error: result.error, nextAttemptAt: next },
        'webhook delivery failed',
      );
    }
    if (disabled) log.warn({ endpointId: claim.endpointId }, 'webhook endpoint disabled: its deliveries have failed for WEBHOOK_DISABLE_AFTER');
  };

  const poll = async (): Promise<void> => {
    if (stopped) return;
    if (polling) {
      again = true;
      return;
    }
    polling = true;
    try {
      do {
        again = false;
        const free = settings.concurrency - inFlight.size;
        if (free <= 0) break;
        const now = new Date();
        const claimed = await store.claimWebhookDeliveries(owner, free, now, new Date(now.getTime() + settings.leaseMs));
        for (const claim of claimed) {
          const running: Promise<void> = attempt(claim)
            .catch((error: unknown) => log.warn({ err: error, endpointId: claim.endpointId, eventId: claim.eventId }, 'could not record a webhook attempt'))
            .finally(() => {
              inFlight.delete(running);
              // A slot is free: look for more at once rather than at the next tick.
              if (!stopped) void poll();
            });
          inFlight.add(running);
        }
        // A full batch means more may be due.
        if (claimed.length === free) again = true;
      } while (again && !stopped);
      if (Date.now() - lastStats >= STATS_EVERY_MS) {
        lastStats = Date.now();
        metrics.outbox(await store.webhookOutboxStats(), new Date());
      }
    } catch (error) {
      // A database down for a moment: the next tick tries again; the leases of what was claimed expire on their own.
      log.warn({ err: error }, 'could not read the webhook outbox');
    } finally {
      polling = false;
    }
  };

  options.storeReady.then(
    () => {
      if (stopped) return;
      void poll();
      timer = setInterval(() => void poll(), settings.pollIntervalMs);
      timer.unref();
    },
    () => undefined, // serve reports a store that never serves
  );

  return {
    async stop(graceMs = 5000) {
      stopped = true;
      clearInterval(timer);
      if (inFlight.size === 0) return;
      let timeout: NodeJS.Timeout | undefined;
      const gaveUp = await Promise.race([
        Promise.allSettled([...inFlight]).then(() => false),
        new Promise<boolean>((resolve) => {
          timeout = setTimeout(() => resolve(true), graceMs);
        }),
      ]);
      clearTimeout(timeout);
      if (gaveUp) await store.releaseWebhookDeliveries(owner).catch(() => undefined);
    },
  };
}
