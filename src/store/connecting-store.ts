// A store that answers 503 store_unavailable until its engine has answered and been prepared in the background, then is that engine.
import type { KeyEnvironment } from '../domain/api-keys.ts';
import type { Store } from './store.ts';
import { isDomainError } from '../domain/errors.ts';
import { storeNotConnected } from './store-errors.ts';
import { callable, defineForwarders, type StoreMethod } from './store-methods.ts';

/**
 * Between attempts: 0.25 s, 0.5, 1, 2, 4, then 5 s, each cut to somewhere between half and all of that, so instances started
 * together against a database that is down do not knock on it in step when it comes back.
 */
const DELAYS = { firstMs: 250, maxMs: 5000 };
/** A failed attempt is logged when its reason differs from the last one logged, else at most this often: a line, not a flood. */
const WARN_EVERY_MS = 30_000;

export interface ConnectLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export interface ConnectOptions<T> {
  /** What must succeed once before the store serves: migrations and seeding, or (a worker) a check of the schema. */
  readonly prepare: (engine: Store) => Promise<T>;
  /** Failures that waiting may cure; any other ends the wait, and connect() rejects with it. */
  readonly retryable: (error: unknown) => boolean;
  readonly log: ConnectLog;
  /** Where the database is, for the log lines; never with its password. */
  readonly target: string;
  /** The failure that made the caller wait, if it already tried once: logged as the first attempt, and the next waits. */
  readonly firstFailure?: unknown;
  /** Tests shorten the waits. */
  readonly delays?: { readonly firstMs: number; readonly maxMs: number };
}

/** Whether the engine could not be reached at all, the one failure that is waited for at start. */
export function isStoreUnavailable(error: unknown): boolean {
  return isDomainError(error) && error.code === 'store_unavailable';
}

function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  // The engine's own words (refused, unknown host) are in the cause; Node's AggregateError has only a code.
  const cause = error.cause as { message?: unknown; code?: unknown } | undefined;
  const detail = cause?.message || cause?.code;
  return typeof detail === 'string' && detail !== '' && detail !== error.message ? `${error.message} (${detail})` : error.message;
}

const notYet = (): Promise<never> => Promise.reject(storeNotConnected());

// Every Store method is an own property made in the constructor (store-methods.ts): declared here for the type checker.
export interface ConnectingStore extends Store {}

/**
 * Lets a server start while its database is down: every call fails with store_unavailable (503 with Retry-After) until
 * connect() has prepared the engine, retrying with capped, jittered back-off; from then on each method is the engine's own,
 * bound, with no promise more. Nothing is asked of the engine before it is prepared, so no request ever meets a schema
 * half-migrated.
 */
export class ConnectingStore {
  readonly engine: string;
  readonly environment: KeyEnvironment;
  readonly #engine: Store;
  #connected = false;
  #closed = false;
  #timer: NodeJS.Timeout | undefined;
  #attemptNow: (() => void) | undefined;
  /** Asked to retry while an attempt was running: should it fail, the next one follows at once. */
  #hurry = false;

  constructor(engine: Store) {
    this.engine = engine.engine;
    this.environment = engine.environment;
    this.#engine = engine;
    // Until prepared, every call fails at once, without touching the network.
    defineForwarders(this, engine, () => notYet);
  }

  /**
   * Tries `prepare` until it succeeds, then serves from the engine and resolves with what it returned. Rejects with the first
   * failure that is not `retryable`; never settles if the store is closed first.
   */
  connect<T>(options: ConnectOptions<T>): Promise<T> {
    const { firstMs, maxMs } = options.delays ?? DELAYS;
    const started = Date.now();
    let failures = 0;
    let warned: { readonly at: number; readonly reason: string } | undefined;
    return new Promise<T>((resolve, reject) => {
      const attempt = () => {
        this.#timer = undefined;
        if (this.#closed) return;
        options.prepare(this.#engine).then(
          (prepared) => {
            if (this.#closed) return;
            // From now on each method is the engine's own, callable alone: no call deeper than the engine's, no promise more.
            const engine = this.#engine;
            defineForwarders(this, engine, (method: StoreMethod) => callable(engine, method));
            this.#connected = true;
            const fields = { database: options.target, attempts: failures + 1, waitedMs: Date.now() - started };
            options.log.info(fields, 'database connected: serving requests');
            resolve(prepared);
          },
          (error: unknown) => {
            if (this.#closed) return;
            if (options.retryable(error)) failed(error);
            else reject(error);
          },
        );
      };
      const failed = (error: unknown) => {
        failures++;
        const nominalMs = Math.min(firstMs * 2 ** (failures - 1), maxMs);
        const retryInMs = this.#hurry ? 0 : Math.round(nominalMs * (0.5 + Math.random() / 2));
        this.#hurry = false;
        const reason = reasonOf(error);
        const now = Date.now();
        if (warned === undefined || warned.reason !== reason || now - warned.at >= WARN_EVERY_MS) {
          warned = { at: now, reason };
          options.log.warn({ database: options.target, attempts: failures, reason, retryInMs }, 'waiting for the database: retrying');
        }
        this.#timer = setTimeout(attempt, retryInMs);
      };
      this.#attemptNow = attempt;
      if (options.firstFailure === undefined) attempt();
      else failed(options.firstFailure);
    });
  }

  /** Ends the wait before the next attempt (another process has just prepared the database); nothing once connected. */
  retryNow(): void {
    if (this.#closed || this.#connected) return;
    if (this.#timer === undefined) {
      this.#hurry = true;
      return;
    }
    clearTimeout(this.#timer);
    this.#attemptNow?.();
  }

  /** Stops trying, and closes the engine. An attempt already running is let finish; its outcome is ignored. */
  close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    return this.#engine.close();
  }
}
