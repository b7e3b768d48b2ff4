// JSON log lines (Fastify's pino): one line per answered request, and serializers that never write a credential.
//
// Performance trick (AnswerLines, and the batched writes of loggingOptions). Relies on: pino's line format (level, time,
// pid, hostname, a child's bindings, then the fields) written by hand without its redaction, which only fields already safe
// may skip. Guarded by: test/unit/http/observability/lazy-child-logger.test.ts and
// test/unit/http/observability/request-log.test.ts. Figures: docs/operations.md#the-answers-log-line
import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { pino } from 'pino';
import type { Config } from '../../config.ts';
import { loggablePath } from './key-redaction.ts';
import { fstatSync } from 'node:fs';
import { hostname } from 'node:os';
import { LazyChildLogger, logsAt, makeChildrenLazy } from './lazy-child-logger.ts';

const LONGEST_MESSAGE = 1000;
const DEEPEST_CAUSE = 3;

type LoggedError = {
  type: string;
  message: string;
  stack: string;
  code?: string;
  cause?: LoggedError;
};

/** Name, message, stack, code and cause only: other properties can hide request bytes (Node's parse errors carry `rawPacket`). */
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

/** How long a line may wait for others to share its write. */
const WRITE_DELAY_MS = 10;
/** The most a pipe write may hold and still be atomic (Linux), so workers' lines never interleave. */
const PIPE_BUF = 4096;
/** Writes to a regular file land whole (Linux serialises them; workers share the offset). */
const FILE_CHUNK = 64 * 1024;
/** What a failing destination (a full disk) may hold back to retry; past it, lines are dropped. */
const MOST_BYTES_WAITING = 16 * 1024 * 1024;

export function chunkLimitFor(fd: number): number {
  try {
    return fstatSync(fd).isFile() ? FILE_CHUNK : PIPE_BUF;
  } catch {
    return PIPE_BUF;
  }
}

interface LineDestination {
  writeLine(line: string, size: number): void;
}

export interface Logging {
  readonly fastify: Pick<FastifyServerOptions, 'loggerInstance' | 'logController'>;
  /** Writes every buffered line now, synchronously: on close, before process.exit, after a fatal error. */
  readonly flush: () => void;
  readonly chunkBytes: number;
  /** Call with `app.log`: Fastify makes requests' loggers from that, not from loggerInstance. */
  readonly lazyRequestLoggers: (appLogger: FastifyBaseLogger) => void;
}

/**
 * JSON lines on stdout, credentials redacted, written in batches of whole lines (PIPE_BUF or WRITE_DELAY_MS, whichever first).
 * Writes are synchronous so an exit flush keeps every line in order; a kill -9 loses at most WRITE_DELAY_MS (docs/operations.md).
 */
export function loggingOptions(level: Config['logLevel'], fd = 1): Logging {
  // Lines are gathered as bytes in one reused buffer (SonicBoom's own re-measures a growing string per line). A failed write
  // is kept by SonicBoom as a view of the chunk, so a new chunk is taken; what waits is bounded and never thrown at a request.
  const out = pino.destination({ dest: fd, sync: true, contentMode: 'buffer', maxLength: MOST_BYTES_WAITING });
  let failed = false;
  out.on('error', () => {
    failed = true;
  });
  // In contentMode 'buffer', SonicBoom's write() takes bytes (its README); its types know only strings.
  const writeBytes = out.write as unknown as (this: typeof out, bytes: Buffer) => boolean;
  const chunkBytes = chunkLimitFor(fd);
  let chunk = Buffer.allocUnsafe(chunkBytes);
  let used = 0;
  const writeChunk = () => {
    const bytes = used;
    used = 0;
    writeBytes.call(out, chunk.subarray(0, bytes));
    if (failed) {
      failed = false;
      chunk = Buffer.allocUnsafe(chunkBytes);
    }
  };
  const flush = () => {
    try {
      if (used > 0) writeChunk();
    } catch {
      // The stream is already closed: nothing more can be saved.
    }
  };
  let pending: NodeJS.Timeout | null = null;
  const writeOut = () => {
    pending = null;
    flush();
  };
  const destination = {
    writeLine(line: string, size: number): void {
      if (used + size > chunkBytes && used > 0) writeChunk();
      if (size > chunkBytes) {
        // Longer than a chunk (a long stack): alone, now, after every line before it.
        writeBytes.call(out, Buffer.from(line));
        return;
      }
      used += chunk.write(line, used, size === line.length ? 'latin1' : 'utf8');
      // Not unref'd: a process with nothing else to do still writes its last lines.
      if (pending === null) pending = setTimeout(writeOut, WRITE_DELAY_MS);
    },
    write(line: string): boolean {
      destination.writeLine(line, Buffer.byteLength(line));
      return true;
    },
  };
  const settings = loggerSettings(level);
  const logger = pino(settings, destination);
  const answerLines = new AnswerLines(logger, destination, Object.keys(settings.serializers ?? {}));
  return {
    fastify: { loggerInstance: logger as FastifyBaseLogger, logController: new OneLinePerRequest() },
    // Each request's logger (Fastify's default factory calls app.log's child()) becomes a pino child only if it writes.
    lazyRequestLoggers: (appLogger) => makeChildrenLazy(appLogger, answerLines),
    flush,
    chunkBytes,
  };
}

/** The answer line's fields in written order (`code`: failures only; undefined is left out, as pino does). */
export interface AnswerFields {
  readonly method: string;
  readonly route: string;
  readonly path: string;
  readonly statusCode: number;
  readonly responseTime: number;
  readonly code: string | undefined;
}

const ANSWER_MESSAGE = 'request completed';
const MOST_ROUTES_KEPT = 256;

/**
 * Writes the answer line as pino would, by hand: its fields are few and already safe, so pino's redaction and generic
 * serialisation (dearer than the rest of GET /hello) are skipped. Figures: docs/operations.md#the-answers-log-line
 */
export class AnswerLines {
  readonly #destination: LineDestination;
  readonly #opening: string;
  readonly #base: string;
  readonly #baseIsAscii: boolean;
  readonly #serialized: ReadonlySet<string>;
  readonly #prefixes = new Map<string, string | null>();
  readonly #routeTexts = new Map<string, { readonly method: string; readonly text: string; readonly ascii: boolean }[]>();
  #lastTime = -1;
  #head = '';
  readonly #statusTexts: string[] = [];

  /** `serialized`: field names with a serializer (a binding under one is not written as it is). */
  constructor(logger: pino.Logger, destination: LineDestination, serialized: readonly string[]) {
    this.#destination = destination;
    this.#serialized = new Set(serialized);
    this.#opening = `{"level":${logger.levels.values.info},"time":`;
    this.#base = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`;
    this.#baseIsAscii = isAscii(this.#base);
  }

  /**
   * One answer line at info, `bindings` first as pino writes a child's. False, nothing written, for bindings pino would
   * not write as they are (not a string, or a name pino serialises or escapes): log through pino then.
   */
  write(bindings: Record<string, unknown>, fields: AnswerFields): boolean {
    const now = Date.now();
    if (now !== this.#lastTime) {
      this.#lastTime = now;
      this.#head = this.#opening + String(now) + this.#base;
    }
    let ascii = this.#baseIsAscii;
    let line = this.#head;
    for (const name in bindings) {
      const value = bindings[name];
      if (value === undefined) continue;
      const prefix = this.#prefixOf(name);
      if (prefix === null || typeof value !== 'string') return false;
      const text = quotedAsIs(value);
      ascii &&= text !== null;
      line += prefix + (text ?? JSON.stringify(value));
    }
    const route = this.#routeText(fields.method, fields.route);
    const path = quotedAsIs(fields.path);
    ascii &&= route.ascii && path !== null;
    line += route.text + (path ?? JSON.stringify(fields.path)) + this.#statusText(fields.statusCode) + hundredthsText(fields.responseTime);
    if (fields.code !== undefined) {
      const code = quotedAsIs(fields.code);
      ascii &&= code !== null;
      line += `,"code":${code ?? JSON.stringify(fields.code)}`;
    }
    line += `,"msg":"${ANSWER_MESSAGE}"}\n`;
    this.#destination.writeLine(line, ascii ? line.length : Buffer.byteLength(line));
    return true;
  }

  #statusText(statusCode: number): string {
    const known = this.#statusTexts[statusCode];
    if (known !== undefined) return known;
    const text = `,"statusCode":${numberText(statusCode)},"responseTime":`;
    if (Number.isInteger(statusCode) && statusCode >= 100 && statusCode <= 999) this.#statusTexts[statusCode] = text;
    return text;
  }

  /** `,"name":` for a binding's name; null for a name pino serialises, or one JSON escapes or that is not ASCII. */
  #prefixOf(name: string): string | null {
    let prefix = this.#prefixes.get(name);
    if (prefix === undefined) {
      const quoted = this.#serialized.has(name) ? null : quotedAsIs(name);
      prefix = quoted === null ? null : `,${quoted}:`;
      if (this.#prefixes.size < 64) this.#prefixes.set(name, prefix);
    }
    return prefix;
  }

  #routeText(method: string, route: string): { readonly text: string; readonly ascii: boolean } {
    let texts = this.#routeTexts.get(route);
    if (texts !== undefined) {
      for (const known of texts) if (known.method === method) return known;
    }
    const text = `,"method":${JSON.stringify(method)},"route":${JSON.stringify(route)},"path":`;
    const made = { method, text, ascii: isAscii(text) };
    if (texts === undefined && this.#routeTexts.size < MOST_ROUTES_KEPT) {
      texts = [];
      this.#routeTexts.set(route, texts);
    }
    if (texts !== undefined && texts.length < 8) texts.push(made);
    return made;
  }
}

/** `text` quoted as JSON.stringify would, when it needs no escape and is all ASCII (as many bytes as characters); else null. */
export function quotedAsIs(text: string): string | null {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || c > 0x7e) return null;
  }
  return `"${text}"`;
}

function numberText(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}

/**
 * numberText by integer arithmetic for whole hundredths below 10^10 (String() of a fraction runs V8's shortest-decimal search).
 * Same text: below 2^49 the shortest decimal that round-trips is h/100's own.
 */
export function hundredthsText(value: number): string {
  const hundredths = Math.round(value * 100);
  if (hundredths / 100 !== value || !(hundredths >= 0 && hundredths < 1e12)) return numberText(value);
  const whole = Math.floor(hundredths / 100);
  const cents = hundredths - whole * 100;
  if (cents === 0) return String(whole);
  if (cents < 10) return `${whole}.0${cents}`;
  return cents % 10 === 0 ? `${whole}.${cents / 10}` : `${whole}.${cents}`;
}

function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false;
  return true;
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

/** The one line written once an answer is sent (`route`: its pattern); the request's logger adds `reqId`. */
export function logResponse(request: FastifyRequest, reply: FastifyReply, route: string | undefined): void {
  const log = request.log;
  if (!logsAt(log, 'info')) return;
  // Every field is safe as it stands: the pattern, Node's method, the redacted path without query, numbers, our own code.
  const fields: AnswerFields = {
    method: request.method,
    route: route ?? 'unmatched',
    path: loggablePath(request.url),
    statusCode: reply.statusCode,
    responseTime: Math.round(reply.elapsedTime * 100) / 100,
    code: reply.failure?.code,
  };
  if (log instanceof LazyChildLogger) {
    const lines = log.safeLineWriter();
    if (lines instanceof AnswerLines && lines.write(log.bindings, fields)) return;
  }
  log.info(fields, ANSWER_MESSAGE);
}
