// A store that answers 503 store_unavailable until its engine has answered and been prepared in the background, then is that engine.
import type { KeyEnvironment } from '../domain/api-keys.ts';
import type {
  Account,
  AccountUpdateOptions,
  AdminCredential,
  AdminTokenRecord,
  ApiKeyRecord,
  AuditActor,
  AuditEvent,
  AuditQuery,
  Credential,
  HeldIdempotencyKey,
  IdempotencyClaimOutcome,
  IdempotencyKeyClaim,
  MigrateOptions,
  MigrationReport,
  NewAccount,
  NewAdminToken,
  NewApiKey,
  NewAuditEvent,
  RolledKey,
  Store,
  StoredAnswer,
} from './store.ts';
import { isDomainError } from '../domain/errors.ts';
import type {
  AttemptOutcome,
  ClaimedDelivery,
  DeliveryAttempt,
  NewWebhookEndpoint,
  OutboxStats,
  WebhookEndpoint,
  WebhookEndpointPosition,
} from './webhook-store.ts';
import { storeNotConnected } from './store-errors.ts';

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

/** Stands in for the engine until it is prepared: every call fails at once, without touching the network. */
const NOT_CONNECTED: Omit<Store, 'environment'> = Object.freeze({
  engine: 'none',
  migrate: notYet,
  createAccountWithKey: notYet,
  updatePremium: notYet,
  checkSchema: notYet,
  createAccount: notYet,
  findAccount: notYet,
  listAccounts: notYet,
  countAccounts: notYet,
  setPremium: notYet,
  deleteAccount: notYet,
  updateName: notYet,
  updateTimezone: notYet,
  claimIdempotencyKey: notYet,
  completeIdempotencyKey: notYet,
  releaseIdempotencyKey: notYet,
  pruneIdempotencyKeys: notYet,
  createKey: notYet,
  listKeys: notYet,
  revokeKey: notYet,
  rollKey: notYet,
  findCredential: notYet,
  recordAudit: notYet,
  listAudit: notYet,
  pruneAudit: notYet,
  touchKey: notYet,
  pageAccounts: notYet,
  createAdminToken: notYet,
  listAdminTokens: notYet,
  revokeAdminToken: notYet,
  findAdminToken: notYet,
  touchAdminToken: notYet,
  createWebhookEndpoint: notYet,
  listWebhookEndpoints: notYet,
  removeWebhookEndpoint: notYet,
  setWebhookEndpointEnabled: notYet,
  claimWebhookDeliveries: notYet,
  recordWebhookAttempt: notYet,
  releaseWebhookDeliveries: notYet,
  listWebhookAttempts: notYet,
  redeliverWebhookEvent: notYet,
  webhookOutboxStats: notYet,
  ping: notYet,
  close: () => Promise.resolve(),
});

/**
 * Lets a server start while its database is down: every call fails with store_unavailable (503 with Retry-After) until
 * connect() has prepared the engine, retrying with capped, jittered back-off; from then on each call goes straight to the engine,
 * one plain call deeper and no promise more. Nothing is asked of the engine before it is prepared, so no request ever meets a
 * schema half-migrated.
 */
export class ConnectingStore implements Store {
  readonly engine: string;
  readonly environment: KeyEnvironment;
  readonly #engine: Store;
  #current: Omit<Store, 'environment'> = NOT_CONNECTED;
  #closed = false;
  #timer: NodeJS.Timeout | undefined;
  #attemptNow: (() => void) | undefined;
  /** Asked to retry while an attempt was running: should it fail, the next one follows at once. */
  #hurry = false;

  constructor(engine: Store) {
    this.engine = engine.engine;
    this.environment = engine.environment;
    this.#engine = engine;
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
            this.#current = this.#engine;
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
    if (this.#closed || this.#current === this.#engine) return;
    if (this.#timer === undefined) {
      this.#hurry = true;
      return;
    }
    clearTimeout(this.#timer);
    this.#attemptNow?.();
  }

  migrate(options?: MigrateOptions): Promise<MigrationReport> {
    return this.#current.migrate(options);
  }
  checkSchema(): Promise<void> {
    return this.#current.checkSchema();
  }
  createAccount(account: NewAccount, audit?: AuditActor): Promise<Account> {
    return this.#current.createAccount(account, audit);
  }
  createAccountWithKey(account: NewAccount, key: NewApiKey, audit?: AuditActor): Promise<Account> {
    return this.#current.createAccountWithKey(account, key, audit);
  }
  updatePremium(accountId: number, premium: boolean, audit?: AuditActor): Promise<Account> {
    return this.#current.updatePremium(accountId, premium, audit);
  }
  findAccount(username: string): Promise<Account | null> {
    return this.#current.findAccount(username);
  }
  listAccounts(): Promise<Account[]> {
    return this.#current.listAccounts();
  }
  countAccounts(): Promise<number> {
    return this.#current.countAccounts();
  }
  setPremium(username: string, premium: boolean, audit?: AuditActor): Promise<Account> {
    return this.#current.setPremium(username, premium, audit);
  }
  deleteAccount(username: string, audit?: AuditActor): Promise<void> {
    return this.#current.deleteAccount(username, audit);
  }
  updateName(accountId: number, name: string, audit?: AuditActor, options?: AccountUpdateOptions): Promise<Account> {
    return this.#current.updateName(accountId, name, audit, options);
  }
  updateTimezone(accountId: number, timezone: string, audit?: AuditActor, options?: AccountUpdateOptions): Promise<Account> {
    return this.#current.updateTimezone(accountId, timezone, audit, options);
  }
  claimIdempotencyKey(claim: IdempotencyKeyClaim): Promise<IdempotencyClaimOutcome> {
    return this.#current.claimIdempotencyKey(claim);
  }
  completeIdempotencyKey(held: HeldIdempotencyKey, answer: StoredAnswer): Promise<boolean> {
    return this.#current.completeIdempotencyKey(held, answer);
  }
  releaseIdempotencyKey(held: HeldIdempotencyKey): Promise<void> {
    return this.#current.releaseIdempotencyKey(held);
  }
  pruneIdempotencyKeys(): Promise<number> {
    return this.#current.pruneIdempotencyKeys();
  }
  createKey(username: string, key: NewApiKey, audit?: AuditActor): Promise<ApiKeyRecord> {
    return this.#current.createKey(username, key, audit);
  }
  rollKey(keyId: string, successor: NewApiKey, oldExpiresAt: Date, audit?: AuditActor): Promise<RolledKey> {
    return this.#current.rollKey(keyId, successor, oldExpiresAt, audit);
  }
  listKeys(username: string): Promise<ApiKeyRecord[]> {
    return this.#current.listKeys(username);
  }
  revokeKey(keyId: string, audit?: AuditActor): Promise<ApiKeyRecord> {
    return this.#current.revokeKey(keyId, audit);
  }
  recordAudit(event: NewAuditEvent, audit: AuditActor): Promise<AuditEvent> {
    return this.#current.recordAudit(event, audit);
  }
  listAudit(query?: AuditQuery): Promise<AuditEvent[]> {
    return this.#current.listAudit(query);
  }
  pruneAudit(before: Date): Promise<number> {
    return this.#current.pruneAudit(before);
  }
  findCredential(keyId: string): Credential | null | Promise<Credential | null> {
    return this.#current.findCredential(keyId);
  }
  touchKey(keyId: string, usedAt: Date): Promise<void> {
    return this.#current.touchKey(keyId, usedAt);
  }
  pageAccounts(afterId: number | null, limit: number): Promise<Account[]> {
    return this.#current.pageAccounts(afterId, limit);
  }
  createAdminToken(token: NewAdminToken, audit?: AuditActor): Promise<AdminTokenRecord> {
    return this.#current.createAdminToken(token, audit);
  }
  listAdminTokens(): Promise<AdminTokenRecord[]> {
    return this.#current.listAdminTokens();
  }
  revokeAdminToken(tokenId: string, audit?: AuditActor): Promise<AdminTokenRecord> {
    return this.#current.revokeAdminToken(tokenId, audit);
  }
  findAdminToken(tokenId: string): Promise<AdminCredential | null> {
    return this.#current.findAdminToken(tokenId);
  }
  touchAdminToken(tokenId: string, usedAt: Date): Promise<void> {
    return this.#current.touchAdminToken(tokenId, usedAt);
  }
  createWebhookEndpoint(endpoint: NewWebhookEndpoint): Promise<WebhookEndpoint> {
    return this.#current.createWebhookEndpoint(endpoint);
  }
  listWebhookEndpoints(after: WebhookEndpointPosition | null, limit: number): Promise<WebhookEndpoint[]> {
    return this.#current.listWebhookEndpoints(after, limit);
  }
  removeWebhookEndpoint(endpointId: string): Promise<WebhookEndpoint> {
    return this.#current.removeWebhookEndpoint(endpointId);
  }
  setWebhookEndpointEnabled(endpointId: string, enabled: boolean, reason?: string): Promise<WebhookEndpoint> {
    return this.#current.setWebhookEndpointEnabled(endpointId, enabled, reason);
  }
  claimWebhookDeliveries(owner: string, limit: number, now: Date, leaseUntil: Date): Promise<ClaimedDelivery[]> {
    return this.#current.claimWebhookDeliveries(owner, limit, now, leaseUntil);
  }
  recordWebhookAttempt(claim: ClaimedDelivery, outcome: AttemptOutcome): Promise<{ readonly disabled: boolean }> {
    return this.#current.recordWebhookAttempt(claim, outcome);
  }
  releaseWebhookDeliveries(owner: string): Promise<void> {
    return this.#current.releaseWebhookDeliveries(owner);
  }
  listWebhookAttempts(endpointId: string, limit: number): Promise<DeliveryAttempt[]> {
    return this.#current.listWebhookAttempts(endpointId, limit);
  }
  redeliverWebhookEvent(eventId: string, endpointId: string | null, now: Date): Promise<string[]> {
    return this.#current.redeliverWebhookEvent(eventId, endpointId, now);
  }
  webhookOutboxStats(): Promise<OutboxStats> {
    return this.#current.webhookOutboxStats();
  }
  ping(): Promise<void> {
    return this.#current.ping();
  }

  /** Stops trying, and closes the engine. An attempt already running is let finish; its outcome is ignored. */
  close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    return this.#engine.close();
  }
}
