// Every answer is logged (one line) and counted (metrics): the last step of the pipeline, and called by hand for the answers
// Fastify sends without running hooks (frameworkErrors in app.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AnswerSeries, Metrics } from './metrics.ts';
import { logResponse } from './request-log.ts';

/** What the answer records need of a route, worked out once when the route is added (pipeline.ts). */
export interface RecordedRoute {
  /** The route pattern; undefined when no route matched. */
  readonly url: string | undefined;
  /** Its answers' series; null for a route that is not counted (GET /metrics itself). */
  readonly answers: AnswerSeries | null;
}

export function recordAnswer(request: FastifyRequest, reply: FastifyReply, route: RecordedRoute, metrics: Metrics): void {
  logResponse(request, reply, route.url);
  if (route.answers !== null) route.answers.observe(request.method, reply.statusCode, reply.elapsedTime / 1000);
  const failure = reply.failure;
  if (failure !== null && failure.fault) metrics.storeError(failure.code);
}
