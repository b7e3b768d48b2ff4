// What authentication reads in PostgreSQL on every request: a key's credential with its account in one read, and its last use,
// written in batches.
import type { KeyScope } from '../keys/key-store.ts';
import { PostgresPart, type PostgresEngine } from '../postgres/postgres-engine.ts';
import type { Credential, CredentialStore } from './credential-store.ts';
import { toAccount } from '../accounts/account-rows.ts';
import { POSTGRES_VALUES } from '../postgres/query.ts';

/** How long a last-use stamp waits for others to go with it: one statement per batch, whatever the number of keys. */
export const TOUCH_BATCH_MS = 1000;

// Never moves a stamp back (two instances' batches may land out of order), and writes no row whose stamp would not change.
const STAMP_KEYS = `UPDATE api_keys k SET last_used_at = v.used_at
  FROM unnest($1::text[], $2::timestamptz[]) AS v(key_id, used_at)
  WHERE k.key_id = v.key_id AND (k.last_used_at IS NULL OR k.last_used_at < v.used_at)`;

interface Waiting {
  readonly succeed: () => void;
  readonly fail: (error: unknown) => void;
}

export class PostgresCredentials extends PostgresPart implements CredentialStore {
  /** The latest use of each key stamped since the last batch. */
  #stamps = new Map<string, Date>();
  #waiting: Waiting[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(engine: PostgresEngine) {
    super(engine);
    engine.beforeClose(() => this.#writeStamps());
  }

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

  /** Settles once the batch holding this stamp is written (at most TOUCH_BATCH_MS later, or when the store closes). */
  touchKey(keyId: string, usedAt: Date): Promise<void> {
    const previous = this.#stamps.get(keyId);
    if (previous === undefined || previous < usedAt) this.#stamps.set(keyId, usedAt);
    // Nothing waits on the timer: a process with nothing else to do exits, and close() writes what is left first.
    this.#timer ??= setTimeout(() => void this.#writeStamps(), TOUCH_BATCH_MS).unref();
    return new Promise((succeed, fail) => this.#waiting.push({ succeed, fail }));
  }

  async #writeStamps(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const stamps = this.#stamps;
    const waiting = this.#waiting;
    if (stamps.size === 0) return;
    this.#stamps = new Map();
    this.#waiting = [];
    try {
      await this.engine.query(STAMP_KEYS, [[...stamps.keys()], [...stamps.values()]]);
      for (const each of waiting) each.succeed();
    } catch (error) {
      for (const each of waiting) each.fail(error);
    }
  }
}
