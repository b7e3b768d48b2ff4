// What authentication reads on SQLite per request: a key's credential (cached until another connection commits) and its last use.
//
// Performance trick (the credential lookup per turn). Relies on: the WAL-index read (wal-index-header.ts) and setImmediate
// running in the turn's check phase, before the next poll. Guarded by: test/unit/store/wal-index-header.test.ts and
// test/unit/store/wal-index-header-locks.test.ts. Figures: docs/operations.md#the-credential-lookup-per-turn
import type { StatementSync } from 'node:sqlite';
import type { CredentialCache } from './credential-cache.ts';
import type { KeyScope } from '../keys/key-store.ts';
import type { SqliteEngine, Row } from '../sqlite/sqlite-engine.ts';
import { WalIndexHeader } from '../sqlite/wal-index-header.ts';
import type { Credential, CredentialStore } from './credential-store.ts';
import { toAccount } from '../accounts/account-rows.ts';
import { SQLITE_VALUES } from '../sqlite/sqlite-engine.ts';

const STAMP_KEY = 'UPDATE api_keys SET last_used_at = ? WHERE key_id = ?';

export class SqliteCredentials implements CredentialStore {
  readonly #engine: SqliteEngine;
  /** Shared with the accounts and keys parts; another connection's commit clears it. */
  readonly #credentials: CredentialCache;
  readonly #dataVersion: StatementSync;
  #seenDataVersion: unknown = undefined;
  /** Null when the cache is off or there is no WAL-index header: data_version alone then. */
  readonly #walIndex: WalIndexHeader | null;
  #lookedThisTurn = false;
  #nextLook: Promise<boolean> | null = null;
  #lookDone: ((looked: boolean) => void) | null = null;

  /** Built while the engine opens: the first read may wait for a lock inside SQLite. */
  constructor(engine: SqliteEngine, credentials: CredentialCache) {
    this.#engine = engine;
    this.#credentials = credentials;
    // Changes when another connection commits; never for our own.
    this.#dataVersion = engine.statement('PRAGMA data_version');
    this.#dataVersion.setReturnArrays(true);
    // After a first read transaction, which makes the -shm file.
    this.#walIndex = credentials.enabled && this.#dataVersion.get() !== undefined ? WalIndexHeader.open(engine.path) : null;
    engine.onClose(() => this.#walIndex?.release());
  }

  #refreshCache(): void {
    if (this.#walIndex?.unchanged()) return;
    // Header before data_version, so a commit between the two is counted or moves the header again. If data_version
    // throws (a recovery elsewhere), the header is not accepted and the next look asks again.
    const version = (this.#dataVersion.get() as unknown as unknown[])[0];
    if (version !== this.#seenDataVersion) {
      this.#credentials.clear();
      this.#seenDataVersion = version;
    }
    this.#walIndex?.accept();
  }

  /**
   * One WAL-index look answers for every read before it: a turn's first lookup looks and answers at once (no promise);
   * later ones in the same turn share one more look in the check phase.
   */
  findCredential(keyId: string): Credential | null | Promise<Credential | null> {
    if (!this.#credentials.enabled) return this.#readCredential(keyId);
    if (this.#lookedThisTurn) {
      this.#nextLook ??= new Promise((resolve) => {
        this.#lookDone = resolve;
      });
      return this.#nextLook.then((looked) => (looked ? (this.#credentials.get(keyId) ?? this.#readCredential(keyId)) : this.#readCredential(keyId)));
    }
    this.#lookedThisTurn = true;
    setImmediate(this.#endTurn);
    try {
      this.#refreshCache();
      const cached = this.#credentials.get(keyId);
      if (cached !== undefined) return cached;
    } catch {
      // Locked (a WAL recovery in another connection): the read below waits for it on timers.
    }
    return this.#readCredential(keyId);
  }

  readonly #endTurn = (): void => {
    this.#lookedThisTurn = false;
    const done = this.#lookDone;
    if (done === null) return;
    this.#nextLook = null;
    this.#lookDone = null;
    let looked = true;
    try {
      this.#refreshCache();
    } catch {
      looked = false; // locked: each waits for its own read
    }
    done(looked);
  };

  #readCredential(keyId: string): Promise<Credential | null> {
    return this.#engine.run(() => {
      if (this.#credentials.enabled) this.#refreshCache();
      const cached = this.#credentials.get(keyId);
      if (cached !== undefined) return cached;
      const row = this.#engine.statement(
        `SELECT k.key_id, k.secret_hash, k.revoked_at, k.scope, k.expires_at, a.id, a.username, a.name, a.timezone, a.premium, a.created_at
         FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_id = ?`,
      ).get(keyId) as Row | undefined;
      // Unknown key ids are not cached: a guesser cannot fill the cache, and every miss costs the same read.
      if (row === undefined) return null;
      const credential: Credential = {
        keyId: String(row.key_id),
        hash: row.secret_hash as Uint8Array,
        revoked: row.revoked_at !== null,
        scope: String(row.scope) as KeyScope,
        // The expiry, not a verdict: compared to the clock at every request, so the cache never goes stale on it.
        expiresAtMs: row.expires_at === null ? null : Date.parse(String(row.expires_at)),
        account: toAccount(row, SQLITE_VALUES),
      };
      this.#credentials.set(credential);
      return credential;
    });
  }

  /**
   * Committed with the next batch of account updates, never by the request. Settles when committed or when the database is
   * found locked; a stamp the lock outlasts is dropped (the next use past the touch interval stamps again).
   */
  touchKey(keyId: string, usedAt: Date): Promise<void> {
    return new Promise((succeed, fail) => {
      const at = usedAt.toISOString();
      const apply = (): void => {
        this.#engine.statement(STAMP_KEY).run(at, keyId);
      };
      this.#engine.queue({ deadline: 0, apply, settle: succeed, fail, locked: succeed });
      if (this.#engine.waitingForLock) succeed();
    });
  }
}
