// Sheds load while the event loop lags: 503 `overloaded` with Retry-After, instead of queueing work it cannot finish.
import underPressure from '@fastify/under-pressure';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { HttpError } from './http-error.ts';

export interface ShedOverloadOptions {
  /** Mean event-loop delay over the last second past which requests are refused. */
  readonly maxEventLoopDelayMs: number;
  /** Route patterns always served (liveness checks must not fail because the process is busy). */
  readonly exemptRoutes: readonly string[];
  readonly retryAfterSeconds: number;
}

export const shedOverload = fp(
  async function shedOverload(app: FastifyInstance, options: ShedOverloadOptions) {
    await app.register(underPressure, {
      maxEventLoopDelay: options.maxEventLoopDelayMs,
      exposeStatusRoute: false,
      // Thrown, not sent: the error mapper writes the envelope, so a shed request looks like every other failure.
      pressureHandler: async (request) => {
        if (options.exemptRoutes.includes(request.routeOptions.url ?? '')) return;
        throw new HttpError(503, 'overloaded', 'This server is overloaded right now; retry after Retry-After seconds.', {
          headers: { 'Retry-After': String(options.retryAfterSeconds) },
        });
      },
    });
  },
  { name: 'shed-overload' },
);
