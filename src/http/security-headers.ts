// Security headers for a JSON API (helmet's choice of headers, fixed once), and Cache-Control: no-store where no policy is set.
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export interface SecurityHeadersOptions {
  /** Strict-Transport-Security max-age in seconds; null: no HSTS (TLS ends at the proxy, which may send its own). */
  readonly hstsMaxAgeSeconds: number | null;
}

/**
 * What every answer carries. Nothing here is rendered by a browser, so nothing may load, frame or be framed. The /docs
 * page replaces the Content-Security-Policy with its own in its onSend hook (src/http/openapi.ts).
 */
export function fixedSecurityHeaders(options: SecurityHeadersOptions): Readonly<Record<string, string>> {
  return {
    'Content-Security-Policy': "default-src 'none';frame-ancestors 'none'",
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Referrer-Policy': 'no-referrer',
    ...(options.hstsMaxAgeSeconds === null ? {} : { 'Strict-Transport-Security': `max-age=${options.hstsMaxAgeSeconds}` }),
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
  };
}

/**
 * Every answer's fixed headers: the security headers, Cache-Control: no-store (answers carry account data; a route may
 * say otherwise later, as the timezone list does), and whatever the app adds (the sandbox's X-Environment).
 */
export function everyAnswerHeaders(options: SecurityHeadersOptions, extra: Readonly<Record<string, string>> = {}): Readonly<Record<string, string>> {
  return { ...fixedSecurityHeaders(options), 'Cache-Control': 'no-store', ...extra };
}

export const securityHeaders = fp(
  async function securityHeaders(app: FastifyInstance, options: { readonly headers: Readonly<Record<string, string>> }) {
    // The same headers @fastify/helmet would send, computed once: helmet rebuilt its middleware on every request, which the
    // profile showed at 3-4% of the CPU of a GET (npm run bench; see bench/results.md), for headers that never change.
    const { headers } = options;
    app.addHook('onRequest', (_request, reply, done) => {
      reply.headers(headers);
      done();
    });
  },
  { name: 'security-headers' },
);
