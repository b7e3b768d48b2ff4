// Security headers for a JSON API (helmet's choice of headers, fixed once), and Cache-Control: no-store where no policy is set.

export interface SecurityHeadersOptions {
  /** Strict-Transport-Security max-age in seconds; null: no HSTS (TLS ends at the proxy, which may send its own). */
  readonly hstsMaxAgeSeconds: number | null;
}

/**
 * What every answer carries. Nothing here is rendered by a browser, so nothing may load, frame or be framed. The /docs
 * page replaces the Content-Security-Policy with its own in its onSend hook (src/http/wire/openapi.ts).
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
 * Every answer's fixed headers, set in one call by the pipeline: the security headers, Cache-Control: no-store (answers carry
 * account data; a route may say otherwise later, as the timezone list does), and whatever the app adds (the sandbox's
 * X-Environment). Computed once: @fastify/helmet rebuilt its middleware on every request, for headers that never change
 * (docs/operations.md#smaller-measured-choices).
 */
export function everyAnswerHeaders(options: SecurityHeadersOptions, extra: Readonly<Record<string, string>> = {}): Readonly<Record<string, string>> {
  return { ...fixedSecurityHeaders(options), 'Cache-Control': 'no-store', ...extra };
}
