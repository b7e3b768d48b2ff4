// What the rest of the service knows of tracing: one object when OTEL_EXPORTER_OTLP_ENDPOINT is set, null when not.
//
// This module imports nothing of OpenTelemetry: the SDK is loaded (otel-tracing.ts, by start-tracing.ts) only when tracing
// is configured, so an untraced server loads no module, adds no hook and wraps no store for it (issue 13: every per-request
// step is counted).
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Store } from '../store/store.ts';

export type SpanAttributes = Readonly<Record<string, string | number | boolean>>;

/** What the code inside a span may add to it once it knows more (a delivery's answer status, say). */
export interface SpanNotes {
  setAttribute(name: string, value: string | number | boolean): void;
}

/**
 * Runs `work` inside a span named `name`, a child of the span active where it is called (a root span when there is none),
 * ended when `work` settles; a rejection marks the span as failed and is passed on unchanged.
 */
export type SpanRunner = <T>(name: string, attributes: SpanAttributes, work: (span: SpanNotes) => Promise<T>) => Promise<T>;

/**
 * What the request spans take from the request log (src/http/observability/): handed in by the pipeline, so tracing,
 * which the pipeline runs inside, never imports from above it.
 */
export interface RequestLogging {
  /** The path as the request log shows it: a key pasted into it never leaves the process. */
  loggablePath(url: string): string;
  /** The request's logger with more fields on every line. */
  withBindings(log: FastifyBaseLogger, bindings: Parameters<FastifyBaseLogger['child']>[0]): FastifyBaseLogger;
}

export interface Tracing {
  /** The pipeline's extra step (src/http/pipeline.ts): a server span per request, continuing the caller's `traceparent`. */
  traceRequests(app: FastifyInstance, logging: RequestLogging): void;
  /** The store with every call a `store.<method>` span, a child of the request's. */
  traceStore(store: Store): Store;
  readonly traced: SpanRunner;
  /** Exports the spans still buffered, then stops: the last step of closing the server. */
  shutdown(): Promise<void>;
}

const NO_NOTES: SpanNotes = { setAttribute: () => {} };

/** The SpanRunner of an untraced server: runs the work, and nothing else. */
export const untraced: SpanRunner = (_name, _attributes, work) => work(NO_NOTES);
