// A request's logger that becomes a real pino child only when it writes a line at an enabled level.
//
// Performance trick. Relies on: Fastify making each request's logger with the root's child() (its default factory, which
// skips the per-request check a childLoggerFactory gets), and pino's child bindings and asChindings rules. Guarded by:
// test/unit/http/observability/lazy-child-logger.test.ts. Figures: docs/operations.md#the-lazy-request-logger
//
// Why: a pino child per request is paid on every answer, though most requests log one line or none.
import type { FastifyBaseLogger } from 'fastify';

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';

/** Writes a request's already-safe line (the answer line) with the bindings, without a child; opaque here (checked by instanceof). */
export type SafeLineWriter = object;
type Bindings = Parameters<FastifyBaseLogger['child']>[0];
/** Names pino's asChindings leaves out: a line with any of them needs the real child. */
const SKIPPED_BY_PINO = ['level', 'serializers', 'formatters', 'customLevels'];
type ChildOptions = NonNullable<Parameters<FastifyBaseLogger['child']>[1]>;
type ChildMaker = (bindings: Bindings, options: ChildOptions) => FastifyBaseLogger;

export class LazyChildLogger {
  readonly #parent: FastifyBaseLogger;
  readonly #bindings: Bindings;
  readonly #options: ChildOptions;
  /** Worked out on the first line written, not per request. */
  #plain: boolean | undefined;
  readonly #safeLines: SafeLineWriter | null;
  /** pino's own child(), when the parent's child() is the one making these. */
  readonly #makeChild: ChildMaker;
  #child: FastifyBaseLogger | undefined;

  constructor(
    parent: FastifyBaseLogger,
    bindings: Bindings,
    options: ChildOptions,
    safeLines: SafeLineWriter | null = null,
    makeChild: ChildMaker = (more, moreOptions) => parent.child(more, moreOptions),
  ) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
    this.#safeLines = safeLines;
    this.#makeChild = makeChild;
  }

  /** No level, serializers, redaction or skipped binding of its own: it writes what its parent would, bindings first. */
  #isPlain(): boolean {
    this.#plain ??= Object.keys(this.#options).length === 0 && !SKIPPED_BY_PINO.some((name) => Object.hasOwn(this.#bindings, name));
    return this.#plain;
  }

  #real(): FastifyBaseLogger {
    this.#child ??= this.#makeChild(this.#bindings, this.#options);
    return this.#child;
  }

  get level(): string {
    return this.#child?.level ?? this.#options.level ?? this.#parent.level;
  }

  set level(level: string) {
    this.#real().level = level;
  }

  isLevelEnabled(level: string): boolean {
    if (this.#child === undefined && this.#options.level === undefined) return (this.#parent as unknown as { isLevelEnabled(level: string): boolean }).isLevelEnabled(level);
    const values = (this.#parent as unknown as { levels: { values: Record<string, number> } }).levels.values;
    return (values[level] ?? Number.POSITIVE_INFINITY) >= (values[this.level] ?? Number.POSITIVE_INFINITY);
  }

  #write(level: Level, args: unknown[]): void {
    if (!this.isLevelEnabled(level)) return;
    const [first, ...rest] = args;
    // A line of fields: the parent writes it with the bindings first, which is the line the child would write.
    if (this.#child === undefined && isPlainObject(first) && this.#isPlain()) {
      (this.#parent[level] as (...values: unknown[]) => void)({ ...this.#bindings, ...first }, ...rest);
      return;
    }
    (this.#real()[level] as (...values: unknown[]) => void)(...args);
  }



  /** Non-null while a line needs no child: the caller writes with it and `bindings`. Otherwise log as usual. */
  safeLineWriter(): SafeLineWriter | null {
    return this.#child === undefined && this.#safeLines !== null && this.#isPlain() ? this.#safeLines : null;
  }

  get bindings(): Record<string, unknown> {
    return this.#bindings as Record<string, unknown>;
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

  /** Still lazy unless a child was already built. */
  withBindings(bindings: Bindings): FastifyBaseLogger {
    if (this.#child !== undefined) return this.#child.child(bindings);
    return new LazyChildLogger(this.#parent, { ...this.#bindings, ...bindings }, this.#options, this.#safeLines, this.#makeChild) as unknown as FastifyBaseLogger;
  }
}

/** More fields on every line (a traced request's trace id): lazy if it was. */
export function withBindings(log: FastifyBaseLogger, bindings: Bindings): FastifyBaseLogger {
  return log instanceof LazyChildLogger ? log.withBindings(bindings) : log.child(bindings);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}

/**
 * Makes `root.child()` lazy, as Fastify's default factory calls it. Not a `childLoggerFactory`: Fastify checks every logger
 * such a factory returns on every request. pino's real children inherit this override, where it is pino's child() again.
 */
export function makeChildrenLazy(root: FastifyBaseLogger, safeLines: SafeLineWriter | null = null): void {
  const pinoChild = root.child;
  const realChild: ChildMaker = (bindings, options) => pinoChild.call(root, bindings, options);
  root.child = function child(this: FastifyBaseLogger, bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    if (this !== root) return pinoChild.call(this, bindings, options);
    return new LazyChildLogger(root, bindings, options ?? {}, safeLines, realChild) as unknown as FastifyBaseLogger;
  };
}

/** Any logger without the check: assume it would. */
export function logsAt(log: FastifyBaseLogger, level: Level): boolean {
  return (log as { isLevelEnabled?: (level: string) => boolean }).isLevelEnabled?.(level) ?? true;
}
