// API keys in SQLite: issued (at most MAX_ACTIVE_KEYS), rolled once, listed and revoked with their audit entries; a changed
// key leaves the credential cache once committed.
import { keyCreated, keyRolled, successorExpiry } from '../audit/audit-changes.ts';
import type { AuditActor } from '../audit/audit-store.ts';
import { auditChange } from '../audit/sqlite.ts';
import type { CredentialCache } from '../credentials/credential-cache.ts';
import type { Prepare, Row, SqliteEngine } from '../sqlite/sqlite-engine.ts';
import { SQLITE_CONSTRAINT_PRIMARYKEY } from '../sqlite/sqlite-errors.ts';
import { accountNotFound, keyAlreadyRolled, keyExists, keyInactive, keyNotFound, tooManyKeys } from '../store-errors.ts';
import { MAX_ACTIVE_KEYS, type ApiKeyRecord, type KeyScope, type KeyStore, type NewApiKey, type RolledKey } from './key-store.ts';
import { KEY_COLUMNS, toKey } from './key-rows.ts';
import { SQLITE_VALUES } from '../sqlite/sqlite-engine.ts';

/** At `?`, an ISO instant: stored times are all ISO, so text order is time order. */
const ACTIVE_KEYS = 'SELECT count(*) AS n FROM api_keys WHERE account_id = ? AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > ?)';

function keyById(statement: Prepare, keyId: string): ApiKeyRecord | null {
  const row = statement(`SELECT ${KEY_COLUMNS} FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_id = ?`).get(keyId);
  return row === undefined ? null : toKey(row as Row, SQLITE_VALUES);
}

/** Inside the caller's transaction; fails with key_exists. */
export function insertKey(statement: Prepare, accountId: number, key: NewApiKey, createdAt = new Date()): ApiKeyRecord {
  try {
    statement(
      `INSERT INTO api_keys (key_id, account_id, secret_hash, display_prefix, label, scope, expires_at, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      key.keyId,
      accountId,
      key.hash,
      key.displayPrefix,
      key.label,
      key.scope ?? 'write',
      key.expiresAt?.toISOString() ?? null,
      createdAt.toISOString(),
    );
  } catch (error) {
    if ((error as { errcode?: number }).errcode === SQLITE_CONSTRAINT_PRIMARYKEY) {
      throw keyExists(key.keyId);
    }
    throw error;
  }
  return keyById(statement, key.keyId)!;
}

function assertRoomForKey(statement: Prepare, accountId: number, username: string): void {
  const active = Number((statement(ACTIVE_KEYS).get(accountId, new Date().toISOString()) as Row).n);
  if (active >= MAX_ACTIVE_KEYS) throw tooManyKeys(username, MAX_ACTIVE_KEYS);
}

export class SqliteKeys implements KeyStore {
  readonly #engine: SqliteEngine;
  readonly #credentials: Pick<CredentialCache, 'keyChanged'>;

  constructor(engine: SqliteEngine, credentials: Pick<CredentialCache, 'keyChanged'>) {
    this.#engine = engine;
    this.#credentials = credentials;
  }

  createKey(username: string, key: NewApiKey, audit?: AuditActor): Promise<ApiKeyRecord> {
    const statement = this.#engine.statement;
    return this.#engine.run(() =>
      this.#engine.transaction(() => {
        const owner = statement('SELECT id, username FROM accounts WHERE username = ?').get(username);
        if (owner === undefined) throw accountNotFound(username);
        assertRoomForKey(statement, Number(owner.id), String(owner.username));
        const record = insertKey(statement, Number(owner.id), key);
        auditChange(statement, audit, keyCreated(Number(owner.id), record));
        return record;
      }),
    );
  }

  rollKey(keyId: string, successor: NewApiKey, oldExpiresAt: Date, audit?: AuditActor): Promise<RolledKey> {
    const statement = this.#engine.statement;
    return this.#engine.run(() => {
      const rolled = this.#engine.transaction(() => {
        const row = statement(
          `SELECT ${KEY_COLUMNS}, k.account_id FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_id = ?`,
        ).get(keyId) as Row | undefined;
        if (row === undefined) throw keyNotFound(keyId);
        const old = toKey(row, SQLITE_VALUES);
        const accountId = Number(row.account_id);
        // One instant, so the successor's lifetime is exactly the old key's.
        const now = new Date();
        // A rolled key is refused first: every roll losing a race gets the same answer.
        if (old.rolledInto !== null) throw keyAlreadyRolled(keyId, old.rolledInto, keyById(statement, old.rolledInto), now);
        if (old.revokedAt !== null) throw keyInactive(keyId, `was revoked at ${old.revokedAt}`);
        if (old.expiresAt !== null && old.expiresAt <= now.toISOString()) throw keyInactive(keyId, `expired at ${old.expiresAt}`);
        // The overlap never lengthens a key's life.
        const expiresAt = old.expiresAt !== null && old.expiresAt < oldExpiresAt.toISOString() ? old.expiresAt : oldExpiresAt.toISOString();
        // Check and set in one statement: "rolled once" holds even if the read above ever left the transaction.
        const set = statement('UPDATE api_keys SET expires_at = ?, rolled_into = ? WHERE key_id = ? AND rolled_into IS NULL').run(
          expiresAt,
          successor.keyId,
          keyId,
        );
        if (Number(set.changes) !== 1) throw keyAlreadyRolled(keyId, String(keyById(statement, keyId)?.rolledInto), null, now);
        assertRoomForKey(statement, accountId, old.username);
        const created = insertKey(
          statement,
          accountId,
          { ...successor, label: old.label, scope: old.scope, expiresAt: successorExpiry(old, now.getTime()) },
          now,
        );
        const updated = keyById(statement, keyId)!;
        auditChange(statement, audit, keyRolled(accountId, old, updated, created));
        return { old: updated, successor: created };
      });
      this.#credentials.keyChanged(keyId);
      return rolled;
    });
  }

  listKeys(username: string): Promise<ApiKeyRecord[]> {
    const statement = this.#engine.statement;
    return this.#engine.run(() => {
      const owner = statement('SELECT id FROM accounts WHERE username = ?').get(username);
      if (owner === undefined) throw accountNotFound(username);
      return statement(
        `SELECT ${KEY_COLUMNS} FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.account_id = ? ORDER BY k.created_at, k.key_id`,
      )
        .all(Number(owner.id))
        .map((row) => toKey(row as Row, SQLITE_VALUES));
    });
  }

  revokeKey(keyId: string, audit?: AuditActor): Promise<ApiKeyRecord> {
    const statement = this.#engine.statement;
    return this.#engine.run(() => {
      const key = this.#engine.transaction(() => {
        // Revoking twice keeps the first time.
        const revoked = statement('UPDATE api_keys SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL RETURNING account_id').get(
          new Date().toISOString(),
          keyId,
        );
        const key = keyById(statement, keyId);
        if (key === null) throw keyNotFound(keyId);
        if (revoked !== undefined) {
          auditChange(statement, audit, {
            action: 'key.revoked',
            accountId: Number(revoked.account_id),
            username: key.username,
            changes: { key_id: { old: keyId, new: keyId }, revoked_at: { old: null, new: key.revokedAt } },
          });
        }
        return key;
      });
      this.#credentials.keyChanged(keyId);
      return key;
    });
  }
}
