// Prometheus metrics (prom-client) in a registry of their own per app, and GET /metrics on the public port behind a token.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { HttpError } from './http-error.ts';
import type { RateBudget } from './rate-limits.ts';

export const METRICS_PATH = '/metrics';
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface Metrics {
  /** Holds only this app's metrics (and the process metrics), so tests can build as many apps as they like. */
  readonly registry: Registry;
  /** One failed authentication, by its 401 code. */
  authFailed(reason: string): void;
  /** One request refused with 429, by the budget it exhausted. */
  rateLimited(budget: RateBudget): void;
  /** One answered request: its route pattern (undefined: none matched), method, status and latency, and a store error if any. */
  observe(request: FastifyRequest, reply: FastifyReply, route: string | undefined): void;
  /**
   * The same metrics, every sample labelled port="<port>": the admin listener's view. The public port's samples carry no
   * port label, so the dashboards and alerts written before the admin port existed still read the same series.
   */
  forPort(port: string): Metrics;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'Requests answered, by route pattern ("unmatched" when no route answered), method and status.',
    labelNames: ['route', 'method', 'status', 'port'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from the request arriving to its answer being sent, by route pattern and method.',
    labelNames: ['route', 'method', 'port'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
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

  function labelled(port: { port: string } | Record<string, never>): Metrics {
    return {
      registry,
      authFailed: (reason) => authFailures.inc({ reason, ...port }),
      rateLimited: (budget) => rateLimitRejections.inc({ budget, ...port }),
      observe(request, reply, pattern) {
        // The pattern, never the URL: one series per route, whatever paths callers invent.
        const route = pattern ?? 'unmatched';
        requests.inc({ route, method: request.method, status: reply.statusCode, ...port });
        latency.observe({ route, method: request.method, ...port }, reply.elapsedTime / 1000);
        if (reply.failure?.fault === true) storeErrors.inc({ code: reply.failure.code, ...port });
      },
      forPort: (name) => labelled({ port: name }),
    };
  }
  return labelled({});
}

export interface MetricsEndpointOptions {
  readonly metrics: Metrics;
  /** Bearer token for GET /metrics on this port; null: the path is not served here (404, like any unknown path). */
  readonly token: string | null;
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** With a token, serves GET /metrics on this port (not rate-limited, not counted: see answer-records.ts). */
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
