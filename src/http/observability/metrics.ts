// Prometheus metrics (prom-client) in a registry of their own per app, and GET /metrics on the public port behind a token.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, Registry, collectDefaultMetrics } from 'prom-client';
import { HttpError } from '../failures/http-error.ts';
import type { RateBudget } from '../limits/rate-limits.ts';

export const METRICS_PATH = '/metrics';
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Plain numbers: prom-client hashes its labels on every call, this once per series. */
export interface AnswerSeries {
  observe(method: string, status: number, seconds: number): void;
}

export interface Metrics {
  /** This app's metrics only, so tests can build as many apps as they like. */
  readonly registry: Registry;
  authFailed(reason: string): void;
  rateLimited(budget: RateBudget): void;
  /** Looked up once per route, not per answer (undefined: no route matched). */
  answersOf(route: string | undefined): AnswerSeries;
  storeError(code: string): void;
  /** Every sample labelled port="<port>"; the public port's carry none, so older dashboards read the same series. */
  forPort(port: string): Metrics;
}

interface MethodCounts {
  readonly statuses: Map<number, number>;
  /** Not cumulative; the last one is past the highest bound. */
  readonly buckets: number[];
  sum: number;
  count: number;
}

/**
 * Performance trick (answers counted in plain numbers). Relies on: the shape of the metric object prom-client's own
 * Histogram gives its registry (a prom-client upgrade may change it). Guarded by:
 * test/unit/http/observability/metrics.test.ts. Figures: docs/operations.md#answers-counted-in-plain-numbers
 *
 * Kept in numbers, handed to prom-client only when scraped, so text, JSON and cluster aggregation stay prom-client's own.
 */
class AnswerCounts {
  readonly #routes = new Map<string, Map<string, MethodCounts>>();
  readonly port: { readonly port: string } | Record<string, never>;

  constructor(port: { readonly port: string } | Record<string, never>) {
    this.port = port;
  }

  answersOf(route: string): AnswerSeries {
    let methods = this.#routes.get(route);
    if (methods === undefined) {
      methods = new Map();
      this.#routes.set(route, methods);
    }
    const byMethod = methods;
    return {
      observe(method, status, seconds) {
        let counts = byMethod.get(method);
        if (counts === undefined) {
          counts = { statuses: new Map(), buckets: new Array<number>(LATENCY_BUCKETS.length + 1).fill(0), sum: 0, count: 0 };
          byMethod.set(method, counts);
        }
        counts.statuses.set(status, (counts.statuses.get(status) ?? 0) + 1);
        let bucket = 0;
        while (bucket < LATENCY_BUCKETS.length && seconds > LATENCY_BUCKETS[bucket]!) bucket++;
        counts.buckets[bucket]!++;
        counts.sum += seconds;
        counts.count++;
      },
    };
  }

  *series(): Generator<[route: string, method: string, counts: MethodCounts]> {
    for (const [route, methods] of this.#routes) for (const [method, counts] of methods) yield [route, method, counts];
  }
}

function latencyMetric(name: string, help: string, ports: readonly AnswerCounts[]) {
  const forPromString = () => {
    const values: object[] = [];
    for (const counts of ports) for (const [route, method, series] of counts.series()) {
      const sharedLabels = { route, method, ...counts.port };
      let cumulative = 0;
      LATENCY_BUCKETS.forEach((le, index) => {
        cumulative += series.buckets[index]!;
        values.push({ labels: { le }, sharedLabels, value: cumulative, metricName: `${name}_bucket`, exemplar: null });
      });
      values.push(
        { labels: { le: '+Inf' }, sharedLabels, value: series.count, metricName: `${name}_bucket`, exemplar: null },
        { labels: {}, sharedLabels, value: series.sum, metricName: `${name}_sum`, exemplar: undefined },
        { labels: {}, sharedLabels, value: series.count, metricName: `${name}_count`, exemplar: undefined },
      );
    }
    return { name, help, type: 'histogram' as const, values, aggregator: 'sum' as const };
  };
  return {
    name,
    help,
    type: 'histogram' as const,
    aggregator: 'sum' as const,
    getForPromString: async () => forPromString(),
    // As prom-client's Histogram gives it for JSON (and so to cluster aggregation).
    get: async () => {
      const metric = forPromString();
      return {
        ...metric,
        values: metric.values.map((value) => {
          const { labels, sharedLabels, ...rest } = value as { labels: object; sharedLabels: object };
          return { ...rest, labels: { ...labels, ...sharedLabels } };
        }),
      };
    },
    reset: () => {},
  };
}

const MISNAMED_DEFAULT_GAUGES = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  // prom-client names these gauges *_total, which Prometheus keeps for counters (promtool check metrics reports them); the
  // same figures by type remain as nodejs_active_handles, _requests and _resources: sum() over them gives the total.
  for (const name of MISNAMED_DEFAULT_GAUGES) registry.removeSingleMetric(name);
  const ports: AnswerCounts[] = [];
  new Counter({
    name: 'http_requests_total',
    help: 'Requests answered, by route pattern ("unmatched" when no route answered), method and status.',
    labelNames: ['route', 'method', 'status', 'port'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const answers of ports) {
        for (const [route, method, counts] of answers.series()) {
          for (const [status, count] of counts.statuses) this.inc({ route, method, status, ...answers.port }, count);
        }
      }
    },
  });
  registry.registerMetric(
    latencyMetric(
      'http_request_duration_seconds',
      'Time from the request arriving to its answer being sent, by route pattern and method.',
      ports,
    ) as unknown as Parameters<Registry['registerMetric']>[0],
  );
  const authFailures = new Counter({
    name: 'auth_failures_total',
    help: 'Failed authentications, by reason (the 401 code answered).',
    labelNames: ['reason', 'port'] as const,
    registers: [registry],
  });
  const rateLimitRejections = new Counter({
    name: 'rate_limit_rejections_total',
    help: 'Requests refused with 429, by budget (per_key, per_address, failed_auth).',
    labelNames: ['budget', 'port'] as const,
    registers: [registry],
  });
  const storeErrors = new Counter({
    name: 'store_errors_total',
    help: 'Requests failed because a dependency (database, Redis) was unavailable or the server failed, by the code answered.',
    labelNames: ['code', 'port'] as const,
    registers: [registry],
  });

  function labelled(port: { readonly port: string } | Record<string, never>): Metrics {
    const answers = new AnswerCounts(port);
    ports.push(answers);
    return {
      registry,
      authFailed: (reason) => authFailures.inc({ reason, ...port }),
      rateLimited: (budget) => rateLimitRejections.inc({ budget, ...port }),
      // The pattern, never the URL: one series per route, whatever paths callers invent.
      answersOf: (route) => answers.answersOf(route ?? 'unmatched'),
      storeError: (code) => storeErrors.inc({ code, ...port }),
      forPort: (name) => {
        let metrics = byPort.get(name);
        if (metrics === undefined) {
          metrics = labelled({ port: name });
          byPort.set(name, metrics);
        }
        return metrics;
      },
    };
  }
  const byPort = new Map<string, Metrics>();
  return labelled({});
}

export interface MetricsEndpointOptions {
  readonly metrics: Metrics;
  /** Null: not served here (404, like any unknown path). */
  readonly token: string | null;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Not rate-limited, not counted (answer-records.ts). */
export const metricsEndpoint = fp(
  async function metricsEndpoint(app: FastifyInstance, options: MetricsEndpointOptions) {
    const { metrics, token } = options;
    if (token === null) return;

    // Both sides hashed first: equal lengths for timingSafeEqual, and no length leak.
    const expected = digest(token);
    const challenge = { 'WWW-Authenticate': 'Bearer realm="account-api metrics"' };
    app.get(METRICS_PATH, async (request, reply) => {
      const presented = /^Bearer +(\S+) *$/i.exec(request.headers.authorization ?? '')?.[1];
      if (presented === undefined || !timingSafeEqual(digest(presented), expected)) {
        throw new HttpError(401, 'metrics_token_required', 'GET /metrics needs the header Authorization: Bearer METRICS_TOKEN.', {
          headers: challenge,
        });
      }
      return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
    });
  },
  { name: 'metrics-endpoint', dependencies: ['failure-responses'] },
);
