// Framing checked before any work: Host on HTTP/1.1 (RFC 9112 §3.2), bodies only chunked (§6.1), only `100-continue` expected
// (RFC 9110 §10.1.1). Refused with the envelope, where Node's own checks answer a bare 400 or 417.
import type { Server } from 'node:http';
import type { FastifyRequest } from 'fastify';
import { HttpError } from '../failures/http-error.ts';

export interface RequestFramingOptions {
  /** HTTP/1.0 predates Host. */
  readonly versions: readonly string[];
}

/**
 * The 100 goes out only when the body is about to be read, so a request refused on its headers is refused at once (Node
 * then closes the connection: what follows could not be framed). Bodiless requests get the 100 at once, so the connection
 * carries on. Any other expectation becomes a request, answered 417 by framingFailure.
 */
export function answerExpectations(server: Server): void {
  server.on('checkContinue', (request, response) => {
    const { headers } = request;
    const hasBody = headers['transfer-encoding'] !== undefined || (headers['content-length'] !== undefined && headers['content-length'] !== '0');
    // Node also routes here what only contains the word: left to the hook's 417.
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
 * Null when framed as this server can read it; `unrouted` gives the 404 or 405. Pairs with `requireHostHeader: false`
 * (connectionOptions) and `answerExpectations`.
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
  // Fastify reads a body even for an unmatched path: say 404 (or 405) before inviting it.
  return request.is404 ? unrouted(request) : null;
}
