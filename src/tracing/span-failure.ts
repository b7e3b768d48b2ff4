// How a span records a failure: shared by the store's spans and the spans of `traced` work.
import { SpanStatusCode, type Span } from '@opentelemetry/api';

/** Marks a span as failed by `error`: its code (or type) and message, never its other properties (they may hold a request's bytes). */
export function failed(span: Span, error: unknown): void {
  const type = error instanceof Error ? ((error as { code?: unknown }).code ?? error.name) : typeof error;
  span.setAttribute('error.type', String(type));
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}
