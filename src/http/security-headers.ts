// Security headers for a JSON API (@fastify/helmet), and Cache-Control: no-store on every answer that sets no policy of its own.
import helmet from '@fastify/helmet';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export interface SecurityHeadersOptions {
  /** Strict-Transport-Security max-age in seconds; null: no HSTS (TLS ends at the proxy, which may send its own). */
  readonly hstsMaxAgeSeconds: number | null;
}

/**
 * What every answer carries. Nothing here is rendered by a browser, so nothing may load, frame or be framed. A later HTML
 * page (/docs) can loosen its own route with `helmet: {...}` in its route options.
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

export const securityHeaders = fp(
  async function securityHeaders(app: FastifyInstance, options: SecurityHeadersOptions) {
    // Exactly fixedSecurityHeaders (test/e2e/security-headers.test.ts compares them): helmet's other headers are for HTML pages.
    await app.register(helmet, {
      contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
      crossOriginEmbedderPolicy: false,
      crossOriginOpenerPolicy: false,
      crossOriginResourcePolicy: { policy: 'same-origin' },
      originAgentCluster: false,
      referrerPolicy: { policy: 'no-referrer' },
      strictTransportSecurity: options.hstsMaxAgeSeconds === null ? false : { maxAge: options.hstsMaxAgeSeconds, includeSubDomains: false },
      xDnsPrefetchControl: false,
      xDownloadOptions: false,
      xFrameOptions: { action: 'deny' },
      xPermittedCrossDomainPolicies: false,
      xXssProtection: false,
    });
    // Answers carry account data: no cache may keep them unless a route says otherwise (the timezone list does).
    app.addHook('onSend', async (_request, reply, payload) => {
      if (!reply.hasHeader('cache-control')) reply.header('Cache-Control', 'no-store');
      return payload;
    });
  },
  { name: 'security-headers' },
);
