// Writes many Premium accounts, each with one real API key, straight into a migrated database (SQLite or PostgreSQL), and
// the `username:key` of each to a file for the load generator.
//
// Keys are made with the service's own functions (src/domain/api-keys.ts), so every one authenticates. The accounts table
// is written in batches that name their own ids (max(id) + 1 onwards), so each key row knows its account without reading
// anything back; on PostgreSQL the identity sequence is moved past them at the end.
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, writeSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { parseDatabaseUrl } from '../src/config.ts';
import { composeKey, randomBase62 } from '../src/domain/api-keys.ts';
import { inTransaction } from './seed.ts';

export interface SeedOptions {
  readonly accounts: number;
  /** Usernames are PREFIX + a number from 1; they must not exist yet. */
  readonly usernamePrefix: string;
  /** Where `username:key` lines go, one per account; null: nowhere. */
  readonly keysOut: string | null;
}

export interface SeedKey {
  readonly username: string;
  readonly token: string;
  readonly keyId: string;
  readonly hash: Buffer;
  readonly displayPrefix: string;
}

const BATCH = 10_000;
const RANDOM_POOL = 64 * 1024;

/** randomBase62's source of bytes, from one large buffer at a time: a randomBytes call per key costs more than the key. */
function pooledRandom(): (size: number) => Buffer {
  let pool = randomBytes(RANDOM_POOL);
  let at = 0;
  return (size) => {
    if (at + size > pool.length) {
      pool = randomBytes(RANDOM_POOL);
      at = 0;
    }
    at += size;
    return pool.subarray(at - size, at);
  };
}

/** `count` live keys for PREFIX1, PREFIX2..., made as the service makes them (composeKey: prefix, id, secret, checksum). */
export function* seedKeys(prefix: string, count: number, first = 1): Generator<SeedKey> {
  const random = pooledRandom();
  for (let i = first; i < first + count; i++) {
    const key = composeKey('live', randomBase62(12, random), randomBase62(32, random));
    yield { username: `${prefix}${i}`, token: key.token, keyId: key.keyId, hash: key.hash, displayPrefix: key.displayPrefix };
  }
}

/** Batches of keys, each written to the keys file as it is made, so 10^6 keys are never all in memory. */
function* batches(options: SeedOptions): Generator<SeedKey[]> {
  const file = options.keysOut === null ? null : openSync(options.keysOut, 'w');
  try {
    let batch: SeedKey[] = [];
    const flush = () => {
      if (file !== null) writeSync(file, batch.map((key) => `${key.username}:${key.token}\n`).join(''));
      const full = batch;
      batch = [];
      return full;
    };
    for (const key of seedKeys(options.usernamePrefix, options.accounts)) {
      batch.push(key);
      if (batch.length === BATCH) yield flush();
    }
    if (batch.length > 0) yield flush();
  } finally {
    if (file !== null) closeSync(file);
  }
}

/** SQLite: one transaction, two prepared statements per account. */
export function seedSqlite(path: string, options: SeedOptions): void {
  const db = new DatabaseSync(path, { enableForeignKeyConstraints: true });
  try {
    db.exec('PRAGMA journal_mode = WAL');
    // The indexes (random key ids, usernames) outgrow the default 2 MB page cache long before 10^6 rows: spilling costs more.
    db.exec('PRAGMA cache_size = -262144');
    const now = new Date().toISOString();
    let id = Number(db.prepare('SELECT coalesce(max(id), 0) AS last FROM accounts').get()!.last);
    const account = db.prepare(
      "INSERT INTO accounts (id, username, name, timezone, premium, created_at, updated_at) VALUES (?, ?, ?, 'UTC', 1, ?, ?)",
    );
    const key = db.prepare('INSERT INTO api_keys (key_id, account_id, secret_hash, display_prefix, created_at) VALUES (?, ?, ?, ?, ?)');
    inTransaction(db, () => {
      for (const batch of batches(options)) {
        for (const each of batch) {
          id += 1;
          account.run(id, each.username, `Seeded ${each.username}`, now, now);
          key.run(each.keyId, id, each.hash, each.displayPrefix, now);
        }
      }
    });
  } finally {
    db.close();
  }
}

/**
 * PostgreSQL: one transaction of multi-row INSERT ... SELECT FROM unnest(...) statements, BATCH rows each, one array parameter
 * per column. COPY would need pg-copy-streams or pg's internal copy protocol; measured, this is within reach of it (see
 * bench/README.md, "Seeding"), and the statement is plain SQL.
 */
export async function seedPostgres(url: string, options: SeedOptions): Promise<void> {
  const client = new pg.Client({ connectionString: url, application_name: 'account-api seed' });
  await client.connect();
  try {
    await client.query('BEGIN');
    // Nothing else writes while we seed; the lock makes the ids we pick safe from anyone who does.
    await client.query('LOCK TABLE accounts IN EXCLUSIVE MODE');
    let last = Number((await client.query('SELECT coalesce(max(id), 0) AS last FROM accounts')).rows[0].last);
    const now = new Date().toISOString();
    for (const batch of batches(options)) {
      const ids = batch.map((_, index) => last + 1 + index);
      last += batch.length;
      await client.query(
        `INSERT INTO accounts (id, username, name, timezone, premium, created_at, updated_at) OVERRIDING SYSTEM VALUE
         SELECT id, username, 'Seeded ' || username, 'UTC', true, $3, $3 FROM unnest($1::bigint[], $2::text[]) AS t(id, username)`,
        [ids, batch.map((key) => key.username), now],
      );
      await client.query(
        `INSERT INTO api_keys (key_id, account_id, secret_hash, display_prefix, created_at)
         SELECT key_id, account_id, decode(hash, 'hex'), display_prefix, $5
         FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[]) AS t(key_id, account_id, hash, display_prefix)`,
        [batch.map((key) => key.keyId), ids, batch.map((key) => key.hash.toString('hex')), batch.map((key) => key.displayPrefix), now],
      );
    }
    // The identity column must hand out ids after ours to accounts made later (the CLI, the admin API).
    await client.query(`SELECT setval(pg_get_serial_sequence('accounts', 'id'), $1)`, [last]);
    await client.query('COMMIT');
    await client.query('ANALYZE accounts');
    await client.query('ANALYZE api_keys');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    await client.end();
  }
}

/** Seeds the database a DATABASE_URL names (read as the service reads it), already migrated. */
export async function seedAccounts(databaseUrl: string, options: SeedOptions): Promise<void> {
  const target = parseDatabaseUrl(databaseUrl, process.cwd());
  if (target.engine === 'postgres') await seedPostgres(target.url, options);
  else seedSqlite(target.path, options);
}
