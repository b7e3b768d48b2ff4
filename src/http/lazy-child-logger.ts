// A request's logger that becomes a real pino child only when it writes a line at an enabled level.
//
// Fastify makes a pino child (with the request id bound) for every request; in the profile of GET /user that cost 3-4% of
// the CPU, although at the default levels most requests log at most one line and, at `warn`, none. This stands in for
// the child, answers the level checks itself, and builds the child on the first line it actually writes.
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildOptions = NonNullable<Parameters<FastifyBaseLogger['child']>[1]>;

export class LazyChildLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  readonly #options: ChildOptions;
  /** Only adds bindings (no level, serializers or redaction of its own): it writes what its parent would with them. */
  readonly #plainChild: boolean;
  #child: FastifyBaseLogger | undefined;

  constructor(parent: FastifyBaseLogger, bindings: Bindings, options: ChildOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
    this.#plainChild = Object.keys(options).length === 0;
  }

  #real(): FastifyBaseLogger {
    this.#child ??= this.#parent.child(this.#bindings, this.#options);
    return this.#child;
  }

  get level(): string {
    return this.#child?.level ?? this.#options.level ?? this.#parent.level;
  }

  set level(level: string) {
    this.#real().level = level;
  }

  isLevelEnabled(level: string): boolean {
    const values = (this.#parent as unknown as { levels: { values: Record<string, number> } }).levels.values;
    return (values[level] ?? Number.POSITIVE_INFINITY) >= (values[this.level] ?? Number.POSITIVE_INFINITY);
  }

  #write(level: Level, args: unknown[]): void {
    if (!this.isLevelEnabled(level)) return;
    const [first, ...rest] = args;
    // A line of fields, as the request's answer line is: the parent writes it with the bindings as its first fields, which is
    // the line the child would write (a child writes its bindings right after the parent's), without building a child.
    if (this.#child === undefined && this.#plainChild && isPlainObject(first)) {
      (this.#parent[level] as (...values: unknown[]) => void)({ ...this.#bindings, ...first }, ...rest);
      return;
    }
    (this.#real()[level] as (...values: unknown[]) => void)(...args);
  }



  fatal(...args: unknown[]): void {
    this.#write('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#write('error', args);
  }
  warn(...args: unknown[]): void {
    this.#write('warn', args);
  }
  info(...args: unknown[]): void {
    this.#write('info', args);
  }
  debug(...args: unknown[]): void {
    this.#write('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#write('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.#real().child(bindings, options);
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}

/** Fastify's `childLoggerFactory`. */
export const lazyChildLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (parent, bindings, options) =>
  new LazyChildLogger(parent, bindings, options) as unknown as FastifyBaseLogger;

/** Whether a line at `level` would be written (any logger without the check: assume it would). */
export function logsAt(log: FastifyBaseLogger, level: Level): boolean {
  return (log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled?.(level) ?? true;
}
