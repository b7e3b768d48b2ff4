// Starts tracing when it is configured: the OpenTelemetry SDK (otel-tracing.ts) is loaded here and nowhere else.
// Apart from tracing.ts so the SDK module can take its types from there without the two importing each other.
import type { TracingSettings } from '../config.ts';
import type { Tracing } from './tracing.ts';

/** Null when tracing is not configured; otherwise starts the OpenTelemetry SDK (one per process: serve's workers each have one). */
export async function createTracing(settings: TracingSettings | null, version: string): Promise<Tracing | null> {
  if (settings === null) return null;
  const { startTracing } = await import('./otel-tracing.ts');
  return startTracing(settings, version);
}
