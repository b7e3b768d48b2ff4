// A store that answers 503 store_unavailable until its engine has answered and been prepared in the background, then is that engine.
import type { KeyEnvironment } from '../domain/api-keys.ts';
import type { Store } from './store.ts';
import { isDomainError } from '../domain/errors.ts';
import { storeNotConnected } from './store-errors.ts';
import { callable, defineForwarders, type StoreMethod } from './store-methods.ts';

/** Capped, doubling, jittered (half to all of it), so instances started together do not knock in step on recovery. */
const DELAYS = { firstMs: 250, maxMs: 5000 };
/** A failure is logged when its reason changes, else at most this often. */
const WARN_EVERY_MS = 30_000;

export interface ConnectLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export interface ConnectOptions<T> {
  /** Migrations and seeding, or (a worker) a schema check. */
  readonly prepare: (engine: Store) => Promise<T>;
  /** Any other failure ends the wait and connect() rejects with it. */
  readonly retryable: (error: unknown) => boolean;
  readonly log: ConnectLog;
  /** For log lines; never with its password. */
  readonly target: string;
  /** A failure the caller already met: logged as the first attempt. */
  readonly firstFailure?: unknown;
  readonly delays?: { readonly firstMs: number; readonly maxMs: number };
}

export function isStoreUnavailable(error: unknown): boolean {
  return isDomainError(error) && error.code === 'store_unavailable';
}

function reasonOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause as { message?: unknown; code?: unknown } | undefined;
  const detail = cause?.message || cause?.code;
  return typeof detail === 'string' && detail !== '' && detail !== error.message ? `${error.message} (${detail})` : error.message;
}

const notYet = (): Promise<never> => Promise.reject(storeNotConnected());

// Every Store method is an own property made in the constructor (store-methods.ts).
export interface ConnectingStore extends Store {}

/**
 * Lets a server start while its database is down: 503 store_unavailable until connect() has prepared the engine, then each
 * method is the engine's own. Nothing is asked before preparation, so no request meets a half-migrated schema.
 */
export class ConnectingStore {
  readonly engine: string;
  readonly environment: KeyEnvironment;
  readonly #engine: Store;
  #connected = false;
  #closed = false;
  #timer: NodeJS.Timeout | undefined;
  #attemptNow: (() => void) | undefined;
  /** Asked to retry mid-attempt: should it fail, the next follows at once. */
  #hurry = false;

  constructor(engine: Store) {
    this.engine = engine.engine;
    this.environment = engine.environment;
    this.#engine = engine;
    defineForwarders(this, engine, () => notYet);
  }

  /** Resolves with what `prepare` returned; rejects on a non-retryable failure; never settles if closed first. */
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
            // From now on each method is the engine's own: no extra call depth, no promise more.
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

  /** Another process has just prepared the database; nothing once connected. */
  retryNow(): void {
    if (this.#closed || this.#connected) return;
    if (this.#timer === undefined) {
      this.#hurry = true;
      return;
    }
    clearTimeout(this.#timer);
    this.#attemptNow?.();
  }

  /** An attempt already running is let finish; its outcome is ignored. */
  close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    return this.#engine.close();
  }
}
