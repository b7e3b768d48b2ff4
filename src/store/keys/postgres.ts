// API keys in PostgreSQL: issued, rolled, listed and revoked with their audit entries; and a new account's key (insertKey, KEY_OF_NEW_ACCOUNT).
import { keyCreated, keyRolled, successorExpiry } from '../audit/audit-changes.ts';
import { auditChange } from '../audit/postgres.ts';
import type { AuditActor } from '../audit/audit-store.ts';
import { brokenConstraint, UNIQUE_VIOLATION } from '../postgres/pg-errors.ts';
import { PostgresPart } from '../postgres/postgres-engine.ts';
import type { Query, Row } from '../postgres/query.ts';
import { iso, isoOrNull } from '../postgres/query.ts';
import { accountNotFound, keyAlreadyRolled, keyExists, keyInactive, keyNotFound, tooManyKeys } from '../store-errors.ts';
import { MAX_ACTIVE_KEYS, type ApiKeyRecord, type KeyScope, type KeyStore, type NewApiKey, type RolledKey } from './key-store.ts';
import { KEY_COLUMNS, toKey } from './key-rows.ts';
import { POSTGRES_VALUES } from '../postgres/query.ts';

const ACTIVE_KEYS =
  'SELECT count(*) AS n FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())';

/** A CTE after the account's own (`a`): the foreign key is checked at statement end. $5 to $8: keyOfNewAccountValues. */
export const KEY_OF_NEW_ACCOUNT = `k AS (
           INSERT INTO api_keys (key_id, account_id, secret_hash, display_prefix, label, created_at)
           SELECT $5, a.id, $6, $7, $8, now() FROM a
         )`;

export function keyOfNewAccountValues(key: NewApiKey): unknown[] {
  return [key.keyId, Buffer.from(key.hash), key.displayPrefix, key.label];
}

export function keyFailure(error: unknown, key: NewApiKey): unknown {
  const broken = brokenConstraint(error);
  if (broken?.state === UNIQUE_VIOLATION && broken.constraint === 'api_keys_pkey') return keyExists(key.keyId);
  return error;
}

/** In the caller's transaction, which holds the owner's row lock when the active-key count matters. */
export async function insertKey(query: Query, accountId: number, key: NewApiKey): Promise<ApiKeyRecord> {
  try {
    const [row] = await query(
      `WITH k AS (
         INSERT INTO api_keys (key_id, account_id, secret_hash, display_prefix, label, scope, expires_at, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, now()) RETURNING *
       )
       SELECT ${KEY_COLUMNS} FROM k JOIN accounts a ON a.id = k.account_id`,
      [key.keyId, accountId, Buffer.from(key.hash), key.displayPrefix, key.label, key.scope ?? 'write', key.expiresAt ?? null],
    );
    return toKey(row!, POSTGRES_VALUES);
  } catch (error) {
    throw keyFailure(error, key);
  }
}

/** Of two keys added at once past MAX_ACTIVE_KEYS, one is refused. */
async function assertRoomForKey(query: Query, accountId: unknown, username: string): Promise<void> {
  const [row] = await query(ACTIVE_KEYS, [accountId]);
  if (Number(row!.n) >= MAX_ACTIVE_KEYS) throw tooManyKeys(username, MAX_ACTIVE_KEYS);
}

async function keyIn(query: Query, keyId: string): Promise<ApiKeyRecord | null> {
  const [row] = await query(`SELECT ${KEY_COLUMNS} FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_id = $1`, [keyId]);
  return row === undefined ? null : toKey(row, POSTGRES_VALUES);
}

export class PostgresKeys extends PostgresPart implements KeyStore {
  createKey(username: string, key: NewApiKey, audit?: AuditActor): Promise<ApiKeyRecord> {
    return this.engine.transaction(async (query) => {
      const [owner] = await query('SELECT id, username FROM accounts WHERE lower(username) = lower($1) FOR UPDATE', [username]);
      if (owner === undefined) throw accountNotFound(username);
      await assertRoomForKey(query, owner.id, String(owner.username));
      const record = await insertKey(query, Number(owner.id), key);
      await auditChange(query, audit, keyCreated(Number(owner.id), record));
      return record;
    });
  }

  rollKey(keyId: string, successor: NewApiKey, oldExpiresAt: Date, audit?: AuditActor): Promise<RolledKey> {
    return this.engine.transaction(async (query) => {
      // The owner's row lock first, as createKey takes it, so the count cannot race a creation.
      const [owner] = await query('SELECT a.id FROM accounts a JOIN api_keys k ON k.account_id = a.id WHERE k.key_id = $1 FOR UPDATE OF a', [keyId]);
      if (owner === undefined) throw keyNotFound(keyId);
      // Read after the locks, so a roll that waited sees the other's rolled_into; now() gives the successor the same lifetime.
      const [row] = await query(
        `SELECT ${KEY_COLUMNS}, k.expires_at <= now() AS expired, now() AS now FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_id = $1 FOR UPDATE OF k`,
        [keyId],
      );
      if (row === undefined) throw keyNotFound(keyId);
      const old = toKey(row, POSTGRES_VALUES);
      const now = row.now as Date;
      // A rolled key is refused first: every roll losing a race gets the same answer.
      if (old.rolledInto !== null) throw keyAlreadyRolled(keyId, old.rolledInto, await keyIn(query, old.rolledInto), now);
      if (old.revokedAt !== null) throw keyInactive(keyId, `was revoked at ${old.revokedAt}`);
      if (row.expired === true) throw keyInactive(keyId, `expired at ${old.expiresAt}`);
      // Check and set in one statement: two rolls can never both mark the key. The overlap never lengthens a key's life.
      const set = await query(
        'UPDATE api_keys SET expires_at = least(expires_at, $2), rolled_into = $3 WHERE key_id = $1 AND rolled_into IS NULL RETURNING key_id',
        [keyId, oldExpiresAt, successor.keyId],
      );
      if (set.length !== 1) throw keyAlreadyRolled(keyId, String((await keyIn(query, keyId))?.rolledInto), null, now);
      await assertRoomForKey(query, owner.id, old.username);
      const created = await insertKey(query, Number(owner.id), {
        ...successor,
        label: old.label,
        scope: old.scope,
        expiresAt: successorExpiry(old, now.getTime()),
      });
      const updated = (await keyIn(query, keyId))!;
      await auditChange(query, audit, keyRolled(Number(owner.id), old, updated, created));
      return { old: updated, successor: created };
    });
  }

  async listKeys(username: string): Promise<ApiKeyRecord[]> {
    // A LEFT JOIN tells "no such account" from "an account without keys" in one read.
    const rows = await this.engine.query(
      `SELECT ${KEY_COLUMNS} FROM accounts a LEFT JOIN api_keys k ON k.account_id = a.id
       WHERE lower(a.username) = lower($1) ORDER BY k.created_at, k.key_id`,
      [username],
    );
    if (rows.length === 0) throw accountNotFound(username);
    return rows.filter((row) => row.key_id !== null).map((row) => toKey(row, POSTGRES_VALUES));
  }

  revokeKey(keyId: string, audit?: AuditActor): Promise<ApiKeyRecord> {
    return this.engine.transaction(async (query) => {
      // Revoking twice keeps the first time.
      const [before] = await query('SELECT revoked_at FROM api_keys WHERE key_id = $1 FOR UPDATE', [keyId]);
      if (before === undefined) throw keyNotFound(keyId);
      const [row] = await query(
        `UPDATE api_keys k SET revoked_at = coalesce(k.revoked_at, now())
         FROM accounts a WHERE a.id = k.account_id AND k.key_id = $1
         RETURNING ${KEY_COLUMNS}, a.id AS account_id`,
        [keyId],
      );
      if (row === undefined) throw keyNotFound(keyId);
      const key = toKey(row, POSTGRES_VALUES);
      if (before.revoked_at === null) {
        await auditChange(query, audit, {
          action: 'key.revoked',
          accountId: Number(row.account_id),
          username: key.username,
          changes: { key_id: { old: keyId, new: keyId }, revoked_at: { old: null, new: key.revokedAt } },
        });
      }
      return key;
    });
  }
}
