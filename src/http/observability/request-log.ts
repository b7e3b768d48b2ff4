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
/** To a regular file every write() lands whole (Linux serialises writes to one file; workers share its offset). */
const FILE_CHUNK = 64 * 1024;
/** The most bytes of lines a failing destination (a full disk) may hold back to try again; past it, lines are dropped. */
const MOST_BYTES_WAITING = 16 * 1024 * 1024;

/** How many bytes of whole lines one write may carry to `fd`: PIPE_BUF to a pipe or a socket, FILE_CHUNK to a file. */
export function chunkLimitFor(fd: number): number {
  try {
    return fstatSync(fd).isFile() ? FILE_CHUNK : PIPE_BUF;
  } catch {
    return PIPE_BUF;
  }
}

/** Where the answer lines go: whole lines, with their length in bytes when the writer knows it. */
interface LineDestination {
  writeLine(line: string, size: number): void;
}

/** Fastify's logging options, and how to write out what the logger still holds. */
export interface Logging {
  /** What Fastify itself takes, and nothing else: spread into its options. */
  readonly fastify: Pick<FastifyServerOptions, 'loggerInstance' | 'logController'>;
  /** Writes every buffered line now, synchronously: on close, before process.exit, and after a fatal error. */
  readonly flush: () => void;
  /** The most bytes of whole lines one write carries (chunkLimitFor). */
  readonly chunkBytes: number;
  /** Makes the loggers of requests lazy: call it with `app.log` (Fastify makes requests' loggers from that, not loggerInstance). */
  readonly lazyRequestLoggers: (appLogger: FastifyBaseLogger) => void;
}

/**
 * JSON lines on stdout, credentials redacted wherever a header object is logged, written in batches: a line is put in memory and
 * the request goes on; the lines leave together, in one write, once the next would not fit in PIPE_BUF or WRITE_DELAY_MS after
 * the first. The writes are synchronous, so that flushing on exit writes every line, in order; a kill -9 loses at most
 * WRITE_DELAY_MS of lines (docs/operations.md).
 */
export function loggingOptions(level: Config['logLevel'], fd = 1): Logging {
  // Whole lines, at most PIPE_BUF a write (to a file: FILE_CHUNK): atomic to a pipe, so workers sharing stdout never
  // interleave mid-line. The lines are gathered as bytes in one reused buffer (SonicBoom's own buffer re-measures a growing
  // string per line); SonicBoom only writes each chunk, retrying EAGAIN. A failed write (a full disk) is kept by SonicBoom
  // as a view of the chunk, so a new chunk is taken and no line overwrites bytes still waiting; what waits is bounded
  // (maxLength), and the failure is never thrown at the request that logged.
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
    /** A whole line of `size` bytes in UTF-8 (its length when it is all ASCII, as only then they are equal). */
    writeLine(line: string, size: number): void {
      if (used + size > chunkBytes && used > 0) writeChunk();
      if (size > chunkBytes) {
        // Longer than a chunk (a long stack): on its own, now, after every line before it.
        writeBytes.call(out, Buffer.from(line));
        return;
      }
      used += chunk.write(line, used, size === line.length ? 'latin1' : 'utf8');
      // Not unref'd: a process with nothing else left to do still writes its last lines before it ends (10 ms later at most).
      if (pending === null) pending = setTimeout(writeOut, WRITE_DELAY_MS);
    },
    /** pino's lines. */
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

/** The fields of the answer line, in the order it writes them (`code`: only on failures; undefined is left out, as pino does). */
export interface AnswerFields {
  readonly method: string;
  readonly route: string;
  readonly path: string;
  readonly statusCode: number;
  readonly responseTime: number;
  readonly code: string | undefined;
}

const ANSWER_MESSAGE = 'request completed';
/** Routes whose text is kept (the route patterns, and 'unmatched': a few dozen). */
const MOST_ROUTES_KEPT = 256;

/**
 * Writes the answer line (logResponse) as pino would, by hand: its fields are known, few, and already safe to log, so
 * pino's redaction pass and generic serialisation are not needed, and on every answer they cost more than the rest of
 * GET /hello. Same destination as every other line, so lines stay in order. The line is put together from text made once
 * where it can be (the opening, the time once a millisecond, the method and route, the message); an all-ASCII line is as
 * many bytes as characters, so it need not be measured. Figures: docs/operations.md#the-answers-log-line
 */
export class AnswerLines {
  readonly #destination: LineDestination;
  /** Up to the time: `{"level":30,"time":`. */
  readonly #opening: string;
  /** pino's base fields, in its order after level and time: pid, hostname. */
  readonly #base: string;
  readonly #baseIsAscii: boolean;
  readonly #serialized: ReadonlySet<string>;
  readonly #prefixes = new Map<string, string | null>();
  /** `,"method":"GET","route":"/api/v0/user","path":` by route, then method. */
  readonly #routeTexts = new Map<string, { readonly method: string; readonly text: string; readonly ascii: boolean }[]>();
  #lastTime = -1;
  /** The line up to the bindings, for the millisecond #lastTime. */
  #head = '';
  /** `,"statusCode":200,"responseTime":` by status code. */
  readonly #statusTexts: string[] = [];

  /** `serialized`: the field names the logger gives a serializer (a binding under one of them is not written as it is). */
  constructor(logger: pino.Logger, destination: LineDestination, serialized: readonly string[]) {
    this.#destination = destination;
    this.#serialized = new Set(serialized);
    this.#opening = `{"level":${logger.levels.values.info},"time":`;
    this.#base = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())}`;
    this.#baseIsAscii = isAscii(this.#base);
  }

  /**
   * One answer line at info, the request logger's `bindings` first, as pino writes a child's. False, and nothing written,
   * for bindings it would not write as pino does (not a string, a name pino skips, serialises or escapes): log through pino.
   */
  write(bindings: Record<string, unknown>, fields: AnswerFields): boolean {
    const now = Date.now();
    if (now !== this.#lastTime) {
      this.#lastTime = now;
      this.#head = this.#opening + String(now) + this.#base;
    }
    // Whether every piece is ASCII so far (a string JSON.stringify had to write may not be).
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
    // A route answers a handful of methods; any more are written without being kept.
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

/** A number as JSON.stringify writes it. */
function numberText(value: number): string {
  return Number.isFinite(value) ? String(value) : 'null';
}

/**
 * A number as JSON.stringify writes it, made by integer arithmetic when it is a whole number of hundredths below 10^10 (a
 * response time in milliseconds, rounded): String() of a fraction runs V8's shortest-decimal search, while the digits of
 * two small integers are cached. The same text: such a number is the double nearest h/100, and below 2^49 the
 * shortest decimal that comes back to it is h/100's own, its trailing zeros dropped.
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

/** Whether every character of `text` is ASCII (then its UTF-8 length is its length). */
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

/** The one line written when an answer has been sent (`route`: its pattern); the request's logger adds its `reqId`. */
export function logResponse(request: FastifyRequest, reply: FastifyReply, route: string | undefined): void {
  const log = request.log;
  if (!logsAt(log, 'info')) return;
  // Every field is safe as it stands: the pattern, the method Node parsed, the path without its query and with anything
  // shaped like a key redacted (loggablePath), numbers, and this server's own failure code.
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
