// What the rest of the service knows of tracing: one object when OTEL_EXPORTER_OTLP_ENDPOINT is set, null when not.
//
// Nothing of OpenTelemetry is imported here: the SDK loads only when configured, so an untraced server pays for no module, hook or wrapper.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Store } from '../store/store.ts';

export type SpanAttributes = Readonly<Record<string, string | number | boolean>>;

/** Added once the code inside a span knows more (a delivery's status, say). */
export interface SpanNotes {
  setAttribute(name: string, value: string | number | boolean): void;
}

/** A child of the active span (or a root), ended when `work` settles; a rejection marks it failed and passes on unchanged. */
export type SpanRunner = <T>(name: string, attributes: SpanAttributes, work: (span: SpanNotes) => Promise<T>) => Promise<T>;

/** Handed in by the pipeline, so tracing never imports from http/, above it. */
export interface RequestLogging {
  /** A key pasted into the path never leaves the process. */
  loggablePath(url: string): string;
  withBindings(log: FastifyBaseLogger, bindings: Parameters<FastifyBaseLogger['child']>[0]): FastifyBaseLogger;
}

export interface Tracing {
  /** A server span per request, continuing the caller's `traceparent`. */
  traceRequests(app: FastifyInstance, logging: RequestLogging): void;
  /** Every call a `store.<method>` span, a child of the request's. */
  traceStore(store: Store): Store;
  readonly traced: SpanRunner;
  /** The last step of closing the server. */
  shutdown(): Promise<void>;
}

const NO_NOTES: SpanNotes = { setAttribute: () => {} };

export const untraced: SpanRunner = (_name, _attributes, work) => work(NO_NOTES);
