// A separate listener (METRICS_HOST:METRICS_PORT) that serves only GET /metrics, without auth, for a Prometheus scraper.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { failure } from '../wire/envelope.ts';

export interface MetricsListenerOptions {
  readonly registry: Registry;
  readonly host: string;
  /** 0 picks a free port (tests); `url` says which. */
  readonly port: number;
}

export interface MetricsListener {
  /** e.g. http://127.0.0.1:9464/metrics */
  readonly url: string;
  close(): Promise<void>;
}

function sendJson(response: ServerResponse, statusCode: number, code: string, message: string, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(failure(statusCode, [{ code, message }]));
  response.writeHead(statusCode, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...headers,
  });
  response.end(body);
}

export async function listenForMetrics(options: MetricsListenerOptions): Promise<MetricsListener> {
  const { registry } = options;

  async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/metrics') return sendJson(response, 404, 'not_found', 'This listener serves only GET /metrics.');
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return sendJson(response, 405, 'method_not_allowed', `${request.method} is not allowed on /metrics; use GET.`, { Allow: 'GET, HEAD' });
    }
    const body = await registry.metrics();
    response.writeHead(200, {
      'Content-Type': registry.contentType,
      'Content-Length': Buffer.byteLength(body),
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
    });
    response.end(request.method === 'HEAD' ? undefined : body);
  }

  const server = createServer({ requestTimeout: 10_000, headersTimeout: 5_000 }, (request, response) => {
    answer(request, response).catch(() => {
      if (!response.headersSent) sendJson(response, 500, 'internal_error', 'The metrics could not be collected.');
      else response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // A scraper's kept-alive connection would hold close() open until it times out.
        server.closeIdleConnections();
      }),
  };
}
