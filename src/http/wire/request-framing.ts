// How a request is framed, checked before any work: HTTP/1.1 needs a Host (RFC 9112 §3.2), a body may be sent only in the
// chunked transfer coding (§6.1), and the only expectation this server can meet is `100-continue` (RFC 9110 §10.1.1).
// Refused with the envelope and the usual headers, where Node's own checks answer a bare 400 or 417.
import type { Server } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { HttpError } from '../failures/http-error.ts';

export interface RequestFramingOptions {
  /** Protocol versions that must carry Host; HTTP/1.0 predates it. */
  readonly versions: readonly string[];
}

/**
 * `Expect: 100-continue`: the interim 100 goes out only when the body is about to be read, so a request refused on its
 * headers (too large by Content-Length, wrong media type, unknown path, no credentials) gets its refusal at once. Node then
 * closes the connection itself (an answer written before the 100 says Connection: close): the client may send the body
 * anyway or not at all, so what follows could not be framed. A request without a body is sent the 100 at once, so its
 * connection, and what is pipelined behind it, carries on. Any other expectation is handed on as a request, and answered
 * 417 by framingFailure.
 */
export function answerExpectations(server: Server): void {
  server.on('checkContinue', (request, response) => {
    const { headers } = request;
    const hasBody = headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
    // Node also routes here what only contains the word (`100-continue-please`): that is left to the hook's 417, uninvited.
    const meant = headers.expect?.trim().toLowerCase() === '100-continue';
    if (meant && hasBody) {
      request.once('resume', () => {
        if (!response.headersSent) response.writeContinue(); // else: answered already, and Node is only draining the rest
      });
    } else if (meant) {
      response.writeContinue();
    }
    server.emit('request', request, response);
  });
  server.on('checkExpectation', (request, response) => server.emit('request', request, response));
}

/**
 * The refusal a request's framing earns, or null when it is framed as this server can read it. `unrouted` gives the 404 or 405
 * for a request no route matches. Pairs with `requireHostHeader: false` in the server options (connectionOptions), which
 * hands the Host check to this step, and with `answerExpectations`, which the pipeline installs on the server.
 */
export function framingFailure(request: FastifyRequest, options: RequestFramingOptions, unrouted: (request: FastifyRequest) => HttpError): HttpError | null {
  const { headers } = request;
  if (headers.host === undefined && options.versions.includes(request.raw.httpVersion)) {
    return new HttpError(400, 'malformed_request', 'An HTTP/1.1 request must carry a Host header.');
  }
  // Node accepts `gzip, chunked` and hands the body on still gzip-coded; a coding it would not undo is not understood.
  const transferEncoding = headers['transfer-encoding'];
  if (transferEncoding !== undefined && transferEncoding.trim().toLowerCase() !== 'chunked') {
    return new HttpError(501, 'unsupported_transfer_coding', 'This server accepts a request body only as is or in the chunked transfer coding.', {
      headers: { Connection: 'close' },
    });
  }
  const expect = headers.expect;
  if (expect === undefined) return null;
  if (expect.trim().toLowerCase() !== '100-continue') {
    return new HttpError(417, 'expectation_failed', "This server can meet no expectation but 'Expect: 100-continue'; send the request without it.");
  }
  // Fastify reads a body even for a path no route matches: say 404 (or 405) before inviting the client to send it.
  return request.is404 ? unrouted(request) : null;
}
