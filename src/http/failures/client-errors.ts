// Answers raw HTTP that never became a request (unparsable, oversized headers, too slow) with the failure envelope.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { failure, type Message } from '../wire/envelope.ts';

export interface ClientErrorOptions {
  /** How long a refused connection keeps reading what the client sends before it is destroyed. */
  readonly lingerMs: number;
  /** No hook runs for these, so the fixed headers are added here. */
  readonly headers: Readonly<Record<string, string>>;
}

type ConnectionError = Error & { code?: string; reason?: string };
/** Not part of Node's typed API. */
type HttpSocket = Socket & { _httpMessage?: ServerResponse | null };

function answerFor(code: string | undefined, reason: string | undefined): { statusCode: number; message: Message } | null {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return {
      statusCode: 408,
      message: { code: 'request_timeout', message: 'The request did not arrive in time; send it again, whole and without pauses.' },
    };
  }
  if (code === 'HPE_HEADER_OVERFLOW') {
    return {
      statusCode: 431,
      message: { code: 'headers_too_large', message: 'The request line and headers are larger than this server accepts.' },
    };
  }
  // A transfer coding not understood (RFC 9112 §6.1, §6.3); with Content-Length it is a smuggling attempt and stays 400.
  if (code === 'HPE_INVALID_TRANSFER_ENCODING' && reason?.includes('Content-Length') !== true) {
    return {
      statusCode: 501,
      message: {
        code: 'unsupported_transfer_coding',
        message: 'This server accepts a request body only as is or in the chunked transfer coding.',
      },
    };
  }
  if (code?.startsWith('HPE_') === true) {
    return { statusCode: 400, message: { code: 'malformed_request', message: 'The request is not valid HTTP/1.1.' } };
  }
  return null; // a socket error (ECONNRESET, EPIPE...): nobody is left to answer
}

/**
 * A minimal answer with `Connection: close`, then a lingering close: destroying the socket with unread bytes would make the
 * kernel send a reset, and the client would lose the answer.
 */
export function answerClientErrors(options: ClientErrorOptions) {
  const extraHeaders = Object.entries(options.headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  // Node reports a broken connection again for every later chunk: only the first is answered.
  const handled = new WeakSet<Socket>();

  /** A FIN first, so nothing sent is lost to a reset. */
  function closeGently(socket: Socket, lastWords?: string): void {
    if (lastWords === undefined) socket.end();
    else socket.end(lastWords);
    const linger = setTimeout(() => socket.destroy(), options.lingerMs);
    linger.unref();
    socket.once('close', () => clearTimeout(linger));
  }

  function refuse(socket: Socket, answer: { statusCode: number; message: Message }, requestId: string): void {
    if (!socket.writable) return; // closed meanwhile (the client left, or the answer before ours said Connection: close)
    const body = JSON.stringify(failure(answer.statusCode, [answer.message]));
    closeGently(
      socket,
      `HTTP/1.1 ${answer.statusCode} ${STATUS_CODES[answer.statusCode]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\n` +
        extraHeaders +
        'Connection: close\r\n' +
        `\r\n${body}`,
    );
  }

  return function answerClientError(this: FastifyInstance, error: ConnectionError, socket: HttpSocket): void {
    if (socket.destroyed || handled.has(socket)) return;
    handled.add(socket);
    const answer = answerFor(error.code, error.reason);
    if (answer === null || !socket.writable) {
      socket.destroy();
      return;
    }
    const requestId = randomUUID();
    // Not the error itself: its rawPacket holds the request's bytes, Authorization included.
    this.log.info({ reqId: requestId, reason: error.code, statusCode: answer.statusCode }, 'connection refused before a request was read');
    const inFlight = socket._httpMessage;
    if (inFlight === null || inFlight === undefined || inFlight.writableFinished) {
      refuse(socket, answer, requestId);
    } else if (inFlight.req.complete) {
      // Bad bytes after a whole request: that request still gets its answer first. Cutting now would lose it, and
      // Connection: close on it would let Node destroy the socket under arriving bytes (a reset).
      inFlight.once('finish', () => refuse(socket, answer, requestId));
    } else if (!inFlight.headersSent) {
      refuse(socket, answer, requestId);
    } else {
      socket.destroy(); // half an answer is on the wire: nothing valid can follow it
    }
  };
}
