// JSON log lines (Fastify's pino): one line per answered request, and serializers that never write a credential.
import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { pino } from 'pino';
import type { Config } from '../config.ts';
import { loggablePath } from './key-redaction.ts';
import { fstatSync } from 'node:fs';
import { hostname } from 'node:os';
import { logSafeLine, logsAt, makeChildrenLazy, type SafeLineWriter } from './lazy-child-logger.ts';

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

/** How long a line may wait in memory for others to share its write. */
const WRITE_DELAY_MS = 10;
/** The most a write to a pipe may hold and still be atomic (Linux); a write of whole lines up to it never interleaves. */
const PIPE_BUF = 4096;
/**
 * To a regular file, every write() lands whole and in place, whatever its size: Linux serialises writes to one file, and the
 * workers share stdout's open file (and so its offset). Lines may leave in bigger chunks there: fewer system calls.
 */
const FILE_CHUNK = 64 * 1024;

/** How many bytes of whole lines one write may carry to `fd`: PIPE_BUF to a pipe or a socket, FILE_CHUNK to a file. */
export function chunkLimitFor(fd: number): number {
  try {
    return fstatSync(fd).isFile() ? FILE_CHUNK : PIPE_BUF;
  } catch {
    return PIPE_BUF;
  }
}

/** Fastify's logging options, and how to write out what the logger still holds. */
export interface Logging {
  /** What Fastify itself takes, and nothing else: spread into its options. */
  readonly fastify: Pick<FastifyServerOptions, 'loggerInstance' | 'logController'>;
  /** Writes every buffered line now, synchronously: on close, before process.exit, and after a fatal error. */
  readonly flush: () => void;
  /** The most bytes of whole lines one write carries (chunkLimitFor). */
  readonly chunkBytes: number;
  /**
   * Makes the loggers of requests lazy (makeChildrenLazy): call it with `app.log` once Fastify is built. Not on the
   * loggerInstance itself: Fastify wraps that in a child of its own (its serializers added), and makes every request's logger
   * from that child.
   */
  readonly lazyRequestLoggers: (appLogger: FastifyBaseLogger) => void;
}

/**
 * JSON lines on stdout, credentials redacted wherever a header object is logged, written in batches: a line is put in memory and
 * the request goes on; the lines leave together, in one write, once the next would not fit in PIPE_BUF or WRITE_DELAY_MS after
 * the first. The writes themselves are synchronous, on the event loop: an asynchronous write (libuv's thread pool) still in
 * flight when the process exits could be lost or overtaken by the final flush, and flushing on exit must write every line, in
 * order. What a kill -9 can lose is what was in memory at that instant: at most WRITE_DELAY_MS of lines (docs/operations.md).
 * Measured on GET /user (wrk -c64, CPU per answer, defaults against LOG_LEVEL=warn on a quiet machine): SonicBoom's own
 * buffer 29-30.6 us against 22-22.7; these batches 27.2-28.0 against 23.5-24.1.
 */
export function loggingOptions(level: Config['logLevel'], fd = 1): Logging {
  // Synchronous writes of at most PIPE_BUF (to a file: FILE_CHUNK), made of whole lines: such a write to a pipe is atomic,
  // so the lines of several workers sharing one stdout never interleave mid-line. Lines wait in memory for WRITE_DELAY_MS,
  // or until the next would not fit in a chunk, and leave together.
  // SonicBoom only writes: given a whole chunk, synchronously, retrying what a full pipe refuses (EAGAIN). The lines are
  // gathered here, as an array: SonicBoom's own buffer appends to one string and measures it again on every line, which
  // costs more than the line itself once a few kilobytes wait.
  const out = pino.destination({ dest: fd, sync: true });
  const chunkBytes = chunkLimitFor(fd);
  let lines: string[] = [];
  let bytes = 0;
  const writeChunk = () => {
    const chunk = lines.length === 1 ? lines[0]! : lines.join('');
    lines = [];
    bytes = 0;
    out.write(chunk);
  };
  const flush = () => {
    try {
      if (lines.length > 0) writeChunk();
    } catch {
      // The stream is already closed, or the reader has gone: nothing more can be saved.
    }
  };
  let pending: NodeJS.Timeout | null = null;
  const writeOut = () => {
    pending = null;
    flush();
  };
  const destination = {
    write(line: string): boolean {
      const size = Buffer.byteLength(line);
      if (bytes + size > chunkBytes && lines.length > 0) writeChunk();
      lines.push(line);
      bytes += size;
      // Not unref'd: a process with nothing else left to do still writes its last lines before it ends (10 ms later at most).
      if (pending === null) pending = setTimeout(writeOut, WRITE_DELAY_MS);
      return true;
    },
  };
  const logger = pino(loggerSettings(level), destination);
  const answerLines = answerLineWriter(logger, destination);
  return {
    fastify: { loggerInstance: logger as FastifyBaseLogger, logController: new OneLinePerRequest() },
    // Each request's logger (Fastify's default factory calls app.log's child()) becomes a pino child only if it writes.
    lazyRequestLoggers: (appLogger) => makeChildrenLazy(appLogger, answerLines),
    flush,
    chunkBytes,
  };
}

/**
 * Writes the answer line (logResponse) as pino would, by hand: its fields are known, few, and already safe to log, so neither
 * pino's redaction pass nor its generic serialisation is needed, and those cost more than the rest of answering GET /hello
 * (~2.7 us a line, of which ~1.3 us redaction, against ~0.9 us for this: a micro-benchmark of 200,000 lines). Same
 * destination as every other line, so lines stay in order; test/unit/http/lazy-child-logger.test.ts holds it to pino's output.
 */
function answerLineWriter(logger: pino.Logger, destination: { write(line: string): unknown }): SafeLineWriter {
  const levels = logger.levels.values;
  // pino's base fields, in its order: level, time, then the base bindings (pid, hostname).
  const base = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`;
  // `,"name":` for each field name seen: the answer line has the same few names on every line.
  const prefixes = new Map<string, string>();
  const prefixOf = (name: string): string => {
    let prefix = prefixes.get(name);
    if (prefix === undefined) {
      prefix = `,${JSON.stringify(name)}:`;
      if (prefixes.size < 64) prefixes.set(name, prefix);
    }
    return prefix;
  };
  return (level, bindings, fields, message) => {
    let line = `{"level":${levels[level]},"time":${Date.now()}${base}`;
    for (const name in bindings) line += prefixOf(name) + JSON.stringify(bindings[name]);
    for (const name in fields) {
      const value = fields[name];
      if (value !== undefined) line += prefixOf(name) + (typeof value === 'number' && Number.isFinite(value) ? String(value) : JSON.stringify(value));
    }
    destination.write(`${line},"msg":${JSON.stringify(message)}}\n`);
  };
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
  // Every field is safe as it stands: the pattern, the method Node parsed, the path without its query and with anything
  // shaped like a key redacted (loggablePath), numbers, and this server's own failure code.
  const line: Record<string, unknown> = {
    method: request.method,
    route: route ?? 'unmatched',
    path: loggablePath(request.url),
    statusCode: reply.statusCode,
    responseTime: Math.round(reply.elapsedTime * 100) / 100,
  };
  const code = reply.failure?.code;
  if (code !== undefined) line.code = code;
  logSafeLine(request.log, 'info', line, 'request completed');
}
