// The background sender: never more than WEBHOOK_CONCURRENCY in flight, a failure rescheduled, a stop that lets go of leases.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Store } from '../../../src/store/store.ts';
import type { SpanRunner } from '../../../src/tracing/tracing.ts';
import type { WebhookSettings } from '../../../src/config.ts';
import { startDeliveryWorker } from '../../../src/service/delivery-worker.ts';
import type { SendResult } from '../../../src/operations/webhooks/send-delivery.ts';
import type { AttemptOutcome, ClaimedDelivery } from '../../../src/store/webhooks/webhook-store.ts';
import { eventually } from '../../support/eventually.ts';

const settings: WebhookSettings = { allowPrivate: true, retryScheduleMs: [1000], leaseMs: 60_000, concurrency: 2, pollIntervalMs: 10, disableAfterMs: 86_400_000, secretsKey: null };
const quiet = { info: () => undefined, warn: () => undefined };
const metrics = { delivered: () => undefined, outbox: () => undefined };

/** A store holding `count` due deliveries, handing them out as claimed, recording what it is told. */
function fakeStore(count: number) {
  const due: ClaimedDelivery[] = Array.from({ length: count }, (_, i) => ({
    deliveryId: i + 1, createdAt: '2026-01-01T00:00:00.000Z', leaseOwner: '', eventId: `evt_${i}`, payload: '{}', endpointId: 'we_1', url: 'http://127.0.0.1:9/', secret: 'whsec_AAAA', attempts: 0,
  }));
  const recorded: AttemptOutcome[] = [];
  /** Date.now() when each outcome reached the store: after everything in it was worked out. */
  const recordedAt: number[] = [];
  const released: string[] = [];
  /** Claims handed out so far: a delivery is in flight from its claim on. */
  const claimed = { count: 0 };
  const store = {
    claimWebhookDeliveries: async (owner: string, limit: number) => {
      const claims = due.splice(0, limit).map((claim) => ({ ...claim, leaseOwner: owner }));
      claimed.count += claims.length;
      return claims;
    },
    recordWebhookAttempt: async (_claim: ClaimedDelivery, outcome: AttemptOutcome) => {
      recorded.push(outcome);
      recordedAt.push(Date.now());
      return { disabled: false };
    },
    releaseWebhookDeliveries: async (owner: string) => {
      released.push(owner);
    },
    webhookOutboxStats: async () => ({ pending: due.length, oldestPendingAt: null }),
  } as unknown as Store;
  return { store, recorded, recordedAt, released, claimed };
}

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `done` holds: however long a loaded machine takes, bounded only by a hang detector. */
const until = (what: string, done: () => boolean) => eventually(what, done, (value) => value, { everyMs: 10 });

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
  await until('all 7 deliveries recorded', () => recorded.length >= 7);
  await worker.stop();
  assert.equal(recorded.length, 7);
  assert.equal(most, 2, `at most WEBHOOK_CONCURRENCY (2) at once; saw ${most}`);
});

test('a failure is given its next attempt from the schedule, jittered', async () => {
  const { store, recorded, recordedAt } = fakeStore(1);
  const worker = startDeliveryWorker({
    store, settings, storeReady: Promise.resolve(), log: quiet, metrics, userAgent: 'test',
    send: async () => ({ status: 500, latencyMs: 1, response: 'no', error: null, succeeded: false }),
  });
  await until('the failed attempt recorded', () => recorded.length >= 1);
  await worker.stop();
  // The next attempt is worked out between the attempt and its recording, however far apart a loaded machine puts them:
  // 1 s - a fifth after the first at the least, 1 s + a fifth after the second at the most.
  const nextAt = recorded[0]!.nextAttemptAt!.getTime();
  const afterAttempt = nextAt - recorded[0]!.attemptedAt.getTime();
  const afterRecording = nextAt - recordedAt[0]!;
  assert.ok(afterAttempt >= 800 && afterRecording <= 1200, `the next attempt ${afterAttempt} ms after the attempt and ${afterRecording} ms after its recording: expected 1 s ± a fifth`);
});

test('stopping waits for deliveries in flight up to the grace, then lets go of their leases', async () => {
  const { store, released, claimed } = fakeStore(1);
  const worker = startDeliveryWorker({
    store, settings, storeReady: Promise.resolve(), log: quiet, metrics, userAgent: 'test',
    send: () => new Promise<SendResult>(() => undefined), // a receiver that never answers
  });
  await until('the delivery claimed and in flight', () => claimed.count >= 1);
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
  await until('both deliveries recorded', () => recorded.length >= 2);
  await worker.stop();
  assert.deepEqual(
    spans.map((span) => [span.name, span.attributes['webhook.event_id'], span.notes['http.response.status_code'], span.notes['webhook.delivered']]).sort(),
    [
      ['webhook.deliver', 'evt_0', 204, true],
      ['webhook.deliver', 'evt_1', 204, true],
    ],
  );
});
