// Webhooks' Prometheus metrics, in the app's registry: deliveries by outcome, the outbox's depth and the age of its oldest event.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { OutboxStats } from '../store/webhooks/webhook-store.ts';

export type DeliveryOutcome = 'succeeded' | 'retrying' | 'failed';

export interface WebhookMetrics {
  delivered(outcome: DeliveryOutcome): void;
  outbox(stats: OutboxStats, now: Date): void;
}

export function createWebhookMetrics(registry: Registry): WebhookMetrics {
  const deliveries = new Counter({
    name: 'account_api_webhook_deliveries_total',
    help: 'Delivery attempts by outcome: succeeded (2xx in time), retrying (failed, tried again later), failed (failed, schedule spent)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  // Every process reads the same shared outbox: with serve --workers the primary shows the largest reading, not the sum.
  const depth = new Gauge({
    name: 'account_api_webhook_outbox_pending',
    help: 'Deliveries neither made nor given up on, across every instance sharing the database',
    aggregator: 'max',
    registers: [registry],
  });
  const oldest = new Gauge({
    name: 'account_api_webhook_outbox_oldest_seconds',
    help: 'Age of the oldest event still waiting for a delivery; 0 when none waits',
    aggregator: 'max',
    registers: [registry],
  });
  for (const outcome of ['succeeded', 'retrying', 'failed']) deliveries.inc({ outcome }, 0);
  return {
    delivered: (outcome) => deliveries.inc({ outcome }),
    outbox: (stats, now) => {
      depth.set(stats.pending);
      oldest.set(stats.oldestPendingAt === null ? 0 : Math.max(0, (now.getTime() - Date.parse(stats.oldestPendingAt)) / 1000));
    },
  };
}
