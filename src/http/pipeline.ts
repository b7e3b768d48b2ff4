// The per-request pipeline: every step before a route's handler and after its answer, in order, and why there.
//
// Every Fastify hook is paid on every answer, so the steps are folded into one onRequest and one onResponse hook; what a
// step needs of its route is worked out once, when the route is added.
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { recordAnswer, type RecordedRoute } from './observability/answer-records.ts';
import { loggablePath } from './observability/key-redaction.ts';
import { withBindings } from './observability/lazy-child-logger.ts';
import { Drain } from './drain-on-close.ts';
import type { KeyUsageCounter } from './observability/key-usage.ts';
import { METRICS_PATH, type Metrics } from './observability/metrics.ts';
import { LoadMonitor } from './limits/overload.ts';
import type { RateBudgets } from './limits/rate-limits.ts';
import { answerExpectations, framingFailure } from './wire/request-framing.ts';
import { cors } from './wire/cors.ts';
import { answerHeaderSetter } from './wire/answer-headers.ts';
import { TurnBatch } from './turn-batch.ts';
import type { Tracing } from '../tracing/tracing.ts';

/** Throws (or rejects with) the answer that refuses the request. */
export type AuthenticationStep = (request: FastifyRequest, reply: FastifyReply, access: string) => void | Promise<void>;

export interface PipelineOptions {
  /** Every answer's fixed headers (security headers, Cache-Control...). */
  readonly answerHeaders: Readonly<Record<string, string>>;
  readonly metrics: Metrics;
  /** The port's authentication (authenticate.ts or admin-auth.ts), given the budgets to spend. */
  readonly authentication: (rateBudgets: RateBudgets) => AuthenticationStep;
  /** Undefined for routes outside the API: no authentication, no budget. */
  readonly accessOf: (config: FastifyContextConfig | undefined) => string | undefined;
  readonly maxEventLoopDelayMs: number;
  /** Served even while overloaded: a liveness check must not fail because the process is busy. */
  readonly alwaysServed: readonly string[];
  readonly hostRequiredFor: readonly string[];
  readonly corsOrigins: readonly string[];
  /** Null: no tracing step at all, not even a hook that checks. */
  readonly tracing: Tracing | null;
  /** Null: answers are not counted per key (the admin port, or KEY_USAGE_FLUSH_MS=0). */
  readonly keyUsage: KeyUsageCounter | null;
}

interface RouteFacts extends RecordedRoute {
  readonly access: string | undefined;
  readonly sheddable: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    pipeline?: RouteFacts;
  }
  interface FastifyRequest {
    /** Read once per request: request.routeOptions builds a new object on every read. */
    routeFacts: RouteFacts | null;
  }
}

export const pipeline = fp(
  async function pipeline(app: FastifyInstance, options: PipelineOptions) {
    const { metrics, keyUsage } = options;
    // Lower case, as Fastify keeps header names, so none is converted per answer.
    const answerHeaders = Object.fromEntries(Object.entries(options.answerHeaders).map(([name, value]) => [name.toLowerCase(), value]));
    const drain = new Drain({ retryAfterSeconds: 1 });
    const load = new LoadMonitor({ maxEventLoopDelayMs: options.maxEventLoopDelayMs, retryAfterSeconds: 2 });
    const authenticate = options.authentication(app.rateBudgets);
    const framing = { versions: options.hostRequiredFor };
    // Tracing keeps each request's span in AsyncLocalStorage: a deferred task must stay in its request's span.
    const turn = new TurnBatch({ keepAsyncContext: options.tracing !== null });
    const unmatched: RouteFacts = { url: undefined, access: undefined, answers: metrics.answersOf(undefined), sheddable: true };

    answerExpectations(app.server);
    app.decorateRequest('caller', null);
    app.decorateRequest('credential', null);
    app.decorateRequest('routeFacts', null);

    app.addHook('onRoute', (route) => {
      const url = route.url;
      route.config = {
        ...route.config,
        pipeline: {
          url,
          access: options.accessOf(route.config),
          answers: url === METRICS_PATH ? null : metrics.answersOf(url),
          sheddable: !options.alwaysServed.includes(url),
        },
      };
    });

    // 0. Only with tracing on: a span per request (src/tracing/request-spans.ts), registered first so the steps below run
    //    inside it. The logging helpers are handed in (tracing sits below http/).
    if (options.tracing !== null) options.tracing.traceRequests(app, { loggablePath, withBindings });

    // 1. Every answer, refusals included, carries the request id and fixed headers (failures set the id themselves too:
    //    Fastify runs no hooks for a URL its router cannot decode).
    const setAnswerHeaders = answerHeaderSetter(answerHeaders);
    const identify = (request: FastifyRequest, reply: FastifyReply) => setAnswerHeaders(reply, request.id);
    // 1b. CORS after step 1 (its own preflight answers carry the id) and before the rest (refusals carry CORS headers).
    const corsOn = options.corsOrigins.length > 0;
    if (corsOn) {
      app.addHook('onRequest', (request, reply, done) => {
        identify(request, reply);
        done();
      });
      await app.register(cors, { origins: options.corsOrigins });
    }

    app.addHook('onRequest', (request, reply, done) => {
      const route = request.routeOptions.config.pipeline ?? unmatched;
      request.routeFacts = route;
      if (!corsOn) identify(request, reply);
      // 2. Refused before any work: a closing server, a request this server cannot frame, an overloaded process.
      const refusal =
        drain.refusal() ?? framingFailure(request, framing, app.unroutedFailure) ?? (route.sheddable ? load.refusal() : null);
      if (refusal !== null) return done(refusal);
      // 3. Who is calling, and whether their budgets allow it (authenticate.ts says in which order, and why).
      if (route.access === undefined) return done();
      const anonymous = request.headers.authorization === undefined;
      const authenticated = authenticate(request, reply, route.access);
      if (authenticated !== undefined) return void authenticated.then(() => done(), done);
      // 4. Without credentials: go on at the end of the turn (turn-batch.ts), so under load a turn's answers leave
      //    together after its reads, as authenticated ones already do.
      if (anonymous) return turn.later(done);
      done();
    });

    // (then, on routes that take a body, its checks before validation: request-bodies.ts; then the route's handler)

    // Only while closing: the answer tells the client not to reuse its connection (drain-on-close.ts).
    app.addHook('onSend', (_request, reply, payload, done) => {
      drain.markAnswer(reply);
      done(null, payload);
    });

    // 5. Once the answer is sent: one log line and the metrics; 6. then, for a proven key (request.keyId, set by
    //    authentication only once the key's secret matched), its usage: counted in memory, written in batches (key-usage.ts).
    app.addHook('onResponse', (request, reply, done) => {
      recordAnswer(request, reply, request.routeFacts ?? factsOf(request, metrics), metrics);
      if (keyUsage !== null && request.keyId !== null) keyUsage.count(request.keyId, reply.statusCode, request.ip);
      done();
    });

    app.addHook('preClose', () => drain.close(app.server));
    app.addHook('onClose', () => load.stop());
  },
  { name: 'pipeline', dependencies: ['failure-responses', 'rate-limits'] },
);

/** Facts for an answer sent without the onRequest hook (a framework error: frameworkErrors in app.ts). */
export function factsOf(request: FastifyRequest, metrics: Metrics): RecordedRoute {
  return request.routeOptions.config.pipeline ?? { url: undefined, answers: metrics.answersOf(undefined) };
}
