// The OpenTelemetry SDK for one process: spans batched and exported over OTLP/HTTP (JSON), W3C trace context, and the
// active span carried across awaits by AsyncLocalStorage. Loaded only when tracing is configured (tracing.ts).
//
// Nothing is registered globally (no global tracer provider, context manager or propagator): the tracer and the context
// manager live in this object, handed in where they are used, so tests can run traced and untraced apps side by side.
import { trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { TracingSettings } from '../config.ts';
import { traceRequests, type RequestTracer } from './request-spans.ts';
import { failed } from './span-failure.ts';
import { TracedStore } from './traced-store.ts';
import type { SpanRunner, Tracing } from './tracing.ts';

export function startTracing(settings: TracingSettings, version: string, exporter?: SpanExporter): Tracing {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName, [ATTR_SERVICE_VERSION]: version }),
    sampler: samplerOf(settings),
    spanProcessors: [new BatchSpanProcessor(exporter ?? new OTLPTraceExporter({ url: settings.tracesUrl }))],
  });
  const tracer = provider.getTracer('account-api', version);
  const contexts = new AsyncLocalStorageContextManager().enable();
  const requests: RequestTracer = { tracer, contexts, propagator: new W3CTraceContextPropagator() };

  const traced: SpanRunner = async (name, attributes, work) => {
    const parent = contexts.active();
    const span = tracer.startSpan(name, { attributes }, parent);
    try {
      return await contexts.with(trace.setSpan(parent, span), () => work(span));
    } catch (error) {
      failed(span, error);
      throw error;
    } finally {
      span.end();
    }
  };

  return {
    traceRequests: (app, logging) => traceRequests(app, requests, logging),
    traceStore: (store) => new TracedStore(store, { tracer, contexts }),
    traced,
    shutdown: async () => {
      await provider.shutdown();
      contexts.disable();
    },
  };
}

/** The specification's samplers; the ratio ones keep `sampleRatio` of the traces, chosen by trace id. */
function samplerOf(settings: TracingSettings): Sampler {
  const ratio = new TraceIdRatioBasedSampler(settings.sampleRatio);
  switch (settings.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}
