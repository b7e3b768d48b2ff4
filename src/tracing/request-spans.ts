// The pipeline's tracing step (only with tracing on): a server span per request, continuing the caller's W3C `traceparent`,
// with the request's handler, and every store call it makes, run inside it; its log lines carry its trace and span ids.
import { defaultTextMapGetter, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import type { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import type { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_URL_PATH,
} from '@opentelemetry/semantic-conventions';
import type { FastifyInstance } from 'fastify';
import type { RequestLogging } from './tracing.ts';

export interface RequestTracer {
  readonly tracer: Tracer;
  readonly contexts: AsyncLocalStorageContextManager;
  readonly propagator: W3CTraceContextPropagator;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's span and the context holding it; set only when tracing is on (request-spans.ts). */
    traceSpan: { readonly span: Span; readonly context: Context } | null;
  }
}

/** Adds the step's hooks: registered only when tracing is configured, so an untraced server pays nothing for them. */
export function traceRequests(app: FastifyInstance, { tracer, contexts, propagator }: RequestTracer, { loggablePath, withBindings }: RequestLogging): void {
  app.decorateRequest('traceSpan', null);

  // First of the pipeline's onRequest steps (pipeline.ts registers it before its own): authentication's credential lookup
  // is then a child of this span. What runs after done() runs inside the span's context, the handler included: Fastify
  // binds body parsing to the request's async context, so a body read later (test/e2e/traces.test.ts) does not lose it.
  app.addHook('onRequest', function startRequestSpan(request, reply, done) {
    const parent = propagator.extract(ROOT_CONTEXT, request.headers, defaultTextMapGetter);
    const route = request.routeOptions.url;
    const span = tracer.startSpan(
      route === undefined ? request.method : `${request.method} ${route}`,
      {
        kind: SpanKind.SERVER,
        attributes: {
          [ATTR_HTTP_REQUEST_METHOD]: request.method,
          [ATTR_HTTP_ROUTE]: route ?? 'unmatched',
          // As logged: a key pasted into the path never leaves the process (key-redaction.ts).
          [ATTR_URL_PATH]: loggablePath(request.url),
        },
      },
      parent,
    );
    const context = trace.setSpan(parent, span);
    request.traceSpan = { span, context };
    const { traceId, spanId } = span.spanContext();
    // Fastify gave the reply the same logger: both write the request's lines.
    request.log = reply.log = withBindings(request.log, { trace_id: traceId, span_id: spanId });
    contexts.with(context, done);
  });

  app.addHook('onResponse', function endRequestSpan(request, reply, done) {
    const traced = request.traceSpan;
    if (traced === null) return done();
    const status = reply.statusCode;
    traced.span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
    // A 4xx is the caller's mistake, not this server's failure (the HTTP conventions say the same of server spans).
    if (status >= 500) {
      traced.span.setAttribute(ATTR_ERROR_TYPE, reply.failure?.code ?? String(status));
      traced.span.setStatus({ code: SpanStatusCode.ERROR });
    }
    traced.span.end();
    done();
  });
}
