// JSON log lines (Fastify's pino): one line per answered request, and serializers that never write a credential.
import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { pino } from 'pino';
import type { Config } from '../config.ts';
import { loggablePath } from './key-redaction.ts';
import { lazyChildLogger, logsAt } from './lazy-child-logger.ts';

const LONGEST_MESSAGE = 1000;
const DEEPEST_CAUSE = 3;

type LoggedError = {
  type: string;
  message: string;
  stack: string;
  code?: string;
  cause?: LoggedError;
};

/**
 * Only the name, message, stack, code and cause of an error: never its other properties, where a request's headers or
 * raw bytes can hide (Node's HTTP parse errors carry `rawPacket`, the request as received, Authorization included).
 */
export function loggedError(error: unknown, depth = 0): LoggedError {
  if (!(error instanceof Error)) return { type: typeof error, message: String(error).slice(0, LONGEST_MESSAGE), stack: '' };
  const logged: LoggedError = { type: error.name, message: error.message.slice(0, LONGEST_MESSAGE), stack: error.stack ?? '' };
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') logged.code = code;
  if (error.cause !== undefined && depth < DEEPEST_CAUSE) logged.cause = loggedError(error.cause, depth + 1);
  return logged;
}

/** Fastify's own per-request lines are replaced by logResponse; its other lines (stream and serializer errors) stay. */
class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}
  override requestCompleted(): void {}
  // Names the URL with its query string; the not-found handler answers (and logResponse logs) instead.
  override routeNotFound(): void {}
}

/** Fastify's logging options, and how to write out what the logger still holds. */
export interface Logging extends Pick<FastifyServerOptions, 'loggerInstance' | 'logController' | 'childLoggerFactory'> {
  /** Writes every buffered line now, synchronously: on close, before process.exit, and after a fatal error. */
  readonly flush: () => void;
}

/**
 * JSON lines on stdout, credentials redacted wherever a header object is logged, written asynchronously: a line is handed to
 * the destination's buffer and the request goes on; the buffer is written as soon as the previous write has finished, so
 * under load many lines go out in one write. What a kill -9 can lose is what sits in that buffer (docs/operations.md, Logs).
 */
export function loggingOptions(level: Config['logLevel'], fd = 1): Logging {
  const destination = pino.destination({ dest: fd, sync: false });
  const logger = pino(loggerSettings(level), destination);
  const flush = () => {
    try {
      destination.flushSync();
    } catch {
      // Nothing to write, or the stream is already closed: either way nothing more can be saved.
    }
  };
  return { loggerInstance: logger as FastifyBaseLogger, logController: new OneLinePerRequest(), childLoggerFactory: lazyChildLogger, flush };
}

function loggerSettings(level: Config['logLevel']): pino.LoggerOptions {
  return {
    level,
    redact: {
      paths: ['req.headers.authorization', 'headers.authorization', 'req.headers.cookie', 'headers.cookie', '*.authorization'],
      censor: '[redacted]',
    },
    serializers: {
      err: loggedError,
      // Never the query string, never headers: either could carry a key.
      req: (request: { method?: string; url?: string }) => ({ method: request.method, path: loggablePath(request.url ?? '') }),
      res: (reply: { statusCode?: number }) => ({ statusCode: reply.statusCode }),
    },
  };
}

/** The one line written when an answer has been sent (`route`: its pattern); the request's logger adds its `reqId`. */
export function logResponse(request: FastifyRequest, reply: FastifyReply, route: string | undefined): void {
  if (!logsAt(request.log, 'info')) return;
  const line: Record<string, unknown> = {
    method: request.method,
    route: route ?? 'unmatched',
    path: loggablePath(request.url),
    statusCode: reply.statusCode,
    responseTime: Math.round(reply.elapsedTime * 100) / 100,
  };
  const code = reply.failure?.code;
  if (code !== undefined) line.code = code;
  request.log.info(line, 'request completed');
}
