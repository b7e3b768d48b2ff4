// What authentication reads in PostgreSQL on every request: a key's credential with its account in one read, and its last use.
import type { KeyScope } from '../keys/key-store.ts';
import { PostgresPart } from '../postgres/postgres-engine.ts';
import type { Credential, CredentialStore } from './credential-store.ts';
import { toAccount } from '../accounts/account-rows.ts';
import { POSTGRES_VALUES } from '../postgres/query.ts';

export class PostgresCredentials extends PostgresPart implements CredentialStore {
  async findCredential(keyId: string): Promise<Credential | null> {
    const row = await this.engine.one(
      `SELECT k.key_id, k.secret_hash, k.revoked_at, k.scope, k.expires_at, a.id, a.username, a.name, a.timezone, a.premium, a.created_at
       FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE k.key_id = $1`,
      [keyId],
    );
    if (row === undefined) return null;
    return {
      keyId: String(row.key_id),
      hash: row.secret_hash as Buffer, // a Buffer is a Uint8Array: no copy
      revoked: row.revoked_at !== null,
      scope: String(row.scope) as KeyScope,
      expiresAtMs: row.expires_at === null ? null : (row.expires_at as Date).getTime(),
      account: toAccount(row, POSTGRES_VALUES),
    };
  }

  async touchKey(keyId: string, usedAt: Date): Promise<void> {
    await this.engine.query('UPDATE api_keys SET last_used_at = $2 WHERE key_id = $1', [keyId, usedAt]);
  }
}
