// The background sender: never more than WEBHOOK_CONCURRENCY in flight, a failure rescheduled, a stop that lets go of leases.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Store } from '../../../src/store/store.ts';
import type { SpanRunner } from '../../../src/tracing/tracing.ts';
import type { WebhookSettings } from '../../../src/config.ts';
import { startDeliveryWorker } from '../../../src/webhooks/delivery-worker.ts';
import type { SendResult } from '../../../src/webhooks/send-delivery.ts';
import type { AttemptOutcome, ClaimedDelivery } from '../../../src/store/webhook-store.ts';

const settings: WebhookSettings = { allowPrivate: true, retryScheduleMs: [1000], leaseMs: 60_000, concurrency: 2, pollIntervalMs: 10, disableAfterMs: 86_400_000, secretsKey: null };
const quiet = { info: () => undefined, warn: () => undefined };
const metrics = { delivered: () => undefined, outbox: () => undefined };

/** A store holding `count` due deliveries, handing them out as claimed, recording what it is told. */
function fakeStore(count: number) {
  const due: ClaimedDelivery[] = Array.from({ length: count }, (_, i) => ({
    deliveryId: i + 1, leaseOwner: '', eventId: `evt_${i}`, payload: '{}', endpointId: 'we_1', url: 'http://127.0.0.1:9/', secret: 'whsec_AAAA', attempts: 0,
  }));
  const recorded: AttemptOutcome[] = [];
  const released: string[] = [];
  const store = {
    claimWebhookDeliveries: async (owner: string, limit: number) => due.splice(0, limit).map((claim) => ({ ...claim, leaseOwner: owner })),
    recordWebhookAttempt: async (_claim: ClaimedDelivery, outcome: AttemptOutcome) => {
      recorded.push(outcome);
      return { disabled: false };
    },
    releaseWebhookDeliveries: async (owner: string) => {
      released.push(owner);
    },
    webhookOutboxStats: async () => ({ pending: due.length, oldestPendingAt: null }),
  } as unknown as Store;
  return { store, recorded, released };
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('never more deliveries in flight than the concurrency allows, and every one is sent', async () => {
  const { store, recorded } = fakeStore(7);
  let inFlight = 0;
  let most = 0;
  const worker = startDeliveryWorker({
    store, settings, storeReady: Promise.resolve(), log: quiet, metrics, userAgent: 'test',
    send: async (): Promise<SendResult> => {
      most = Math.max(most, ++inFlight);
      await wait(20);
      inFlight--;
      return { status: 204, latencyMs: 20, response: '', error: null, succeeded: true };
    },
  });
  for (let i = 0; i < 100 && recorded.length < 7; i++) await wait(10);
  await worker.stop();
  assert.equal(recorded.length, 7);
  assert.equal(most, 2, `at most WEBHOOK_CONCURRENCY (2) at once; saw ${most}`);
});

test('a failure is given its next attempt from the schedule, jittered', async () => {
  const { store, recorded } = fakeStore(1);
  const worker = startDeliveryWorker({
    store, settings, storeReady: Promise.resolve(), log: quiet, metrics, userAgent: 'test',
    send: async () => ({ status: 500, latencyMs: 1, response: 'no', error: null, succeeded: false }),
  });
  for (let i = 0; i < 100 && recorded.length < 1; i++) await wait(10);
  await worker.stop();
  const next = recorded[0]!.nextAttemptAt!.getTime() - recorded[0]!.attemptedAt.getTime();
  assert.ok(next >= 800 && next <= 1300, `the next attempt ${next} ms later, expected 1 s ± a fifth`);
});

test('stopping waits for deliveries in flight up to the grace, then lets go of their leases', async () => {
  const { store, released } = fakeStore(1);
  const worker = startDeliveryWorker({
    store, settings, storeReady: Promise.resolve(), log: quiet, metrics, userAgent: 'test',
    send: () => new Promise<SendResult>(() => undefined), // a receiver that never answers
  });
  await wait(50);
  const started = performance.now();
  await worker.stop(100);
  assert.ok(performance.now() - started >= 90, 'stop waited for the grace');
  assert.equal(released.length, 1, 'the lease of the delivery still running was let go');
});

test('with tracing on, every delivery runs in a webhook.deliver span that records the answer', async () => {
  const { store, recorded } = fakeStore(2);
  const spans: { name: string; attributes: Record<string, unknown>; notes: Record<string, unknown> }[] = [];
  const traced: SpanRunner = async (name, attributes, work) => {
    const span = { name, attributes: { ...attributes }, notes: {} as Record<string, unknown> };
    spans.push(span);
    return work({ setAttribute: (key, value) => void (span.notes[key] = value) });
  };
  const worker = startDeliveryWorker({
    store, settings, storeReady: Promise.resolve(), log: quiet, metrics, userAgent: 'test', traced,
    send: async () => ({ status: 204, latencyMs: 1, response: '', error: null, succeeded: true }),
  });
  for (let i = 0; i < 100 && recorded.length < 2; i++) await wait(10);
  await worker.stop();
  assert.deepEqual(
    spans.map((span) => [span.name, span.attributes['webhook.event_id'], span.notes['http.response.status_code'], span.notes['webhook.delivered']]).sort(),
    [
      ['webhook.deliver', 'evt_0', 204, true],
      ['webhook.deliver', 'evt_1', 204, true],
    ],
  );
});
