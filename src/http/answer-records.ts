// Every answer is logged (one line) and counted (metrics), from one hook that reads the route pattern once: Fastify's
// request.routeOptions builds a new object on every read.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { METRICS_PATH, type Metrics } from './metrics.ts';
import { logResponse } from './request-log.ts';

/** Also called by hand for the answers Fastify sends without running hooks (frameworkErrors in app.ts). */
export function recordAnswer(request: FastifyRequest, reply: FastifyReply, metrics: Metrics): void {
  const route = request.routeOptions.url;
  logResponse(request, reply, route);
  if (route !== METRICS_PATH) metrics.observe(request, reply, route);
}

export const answerRecords = fp(
  async function answerRecords(app: FastifyInstance, options: { readonly metrics: Metrics }) {
    app.addHook('onResponse', (request, reply, done) => {
      recordAnswer(request, reply, options.metrics);
      done();
    });
  },
  { name: 'answer-records', dependencies: ['failure-responses'] },
);
