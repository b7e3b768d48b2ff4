// Load shedding: while the event loop lags, requests are refused with 503 `overloaded` and Retry-After instead of queued.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { HttpError } from '../failures/http-error.ts';

export interface LoadMonitorOptions {
  /** Mean event-loop delay over the last second past which requests are refused; 0 turns shedding off. */
  readonly maxEventLoopDelayMs: number;
  readonly retryAfterSeconds: number;
}

const RESOLUTION_MS = 10;
const SAMPLE_INTERVAL_MS = 1000;

/**
 * Samples the event loop's delay once a second; the per-request check is one comparison. @fastify/under-pressure does the
 * same sampling, but its onRequest hook also builds `request.routeOptions` on every request (a fresh object per read), so
 * this is written here and asked from the pipeline instead (docs/operations.md#performance-and-memory, "Load shedding").
 */
export class LoadMonitor {
  readonly #maxDelayMs: number;
  readonly #refusal: () => HttpError;
  #delayMs = 0;
  #histogram: ReturnType<typeof monitorEventLoopDelay> | null = null;
  #timer: NodeJS.Timeout | null = null;

  constructor(options: LoadMonitorOptions) {
    this.#maxDelayMs = options.maxEventLoopDelayMs;
    const headers = { 'Retry-After': String(options.retryAfterSeconds) };
    this.#refusal = () => new HttpError(503, 'overloaded', 'This server is overloaded right now; retry after Retry-After seconds.', { headers });
    if (this.#maxDelayMs === 0) return;
    const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    histogram.enable();
    this.#histogram = histogram;
    this.#timer = setInterval(() => {
      // A second without a sample (this timer came due before the histogram's, as after a start on a busy machine) measured
      // nothing, and nothing measured is not lag: shedding follows only a delay this process actually recorded.
      // The histogram's own timer fires every RESOLUTION_MS: what it adds to each sample is not lag either.
      this.#delayMs = histogram.count === 0 ? 0 : Math.max(0, histogram.mean / 1e6 - RESOLUTION_MS);
      histogram.reset();
    }, SAMPLE_INTERVAL_MS);
    this.#timer.unref();
  }

  /** The refusal to answer while the loop lags past the limit, else null. */
  refusal(): HttpError | null {
    return this.#delayMs > this.#maxDelayMs && this.#maxDelayMs > 0 ? this.#refusal() : null;
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#histogram?.disable();
    this.#timer = null;
  }
}
