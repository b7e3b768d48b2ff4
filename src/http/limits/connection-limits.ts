// Node HTTP server options that bound each connection: header and request timeouts, keep-alive idling, header size.
import type { ServerOptions } from 'node:http';
import type { ConnectionSettings } from '../../config.ts';

export interface ConnectionOptions {
  readonly requestTimeout: number;
  readonly keepAliveTimeout: number;
  readonly http: ServerOptions;
}

/**
 * Fastify options for `limits` (all but `maxConnections`, which Node only takes as a property of the server).
 * Timeouts are enforced by Node's periodic sweep of connections, every 30 s unless told otherwise: far too
 * coarse for a 5 s header timeout, so it sweeps four times per header timeout (at most once a second).
 */
export function connectionOptions(limits: ConnectionSettings): ConnectionOptions {
  return {
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    http: {
      maxHeaderSize: limits.maxHeaderBytes,
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: Math.max(25, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4))),
      // Node would answer a request without Host with a bare 400; requireHost answers it with the envelope instead.
      requireHostHeader: false,
    },
  };
}
