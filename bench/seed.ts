// The bench's databases: the account the load uses, made with the real CLI, then bulk accounts written straight into SQLite.
import { copyFileSync, existsSync } from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import type { BenchAccount, BenchAccounts } from './calls.ts';
import { runToEnd, SERVICE_MAIN } from './processes.ts';

async function createAccount(env: NodeJS.ProcessEnv, username: string, name: string): Promise<BenchAccount> {
  // --json: the CLI says the id and timezone it gave the account.
  const created = JSON.parse(await runToEnd(SERVICE_MAIN, ['users', 'create', username, '--name', name, '--premium', '--json'], env)) as {
    user_id: number;
    timezone: string;
  };
  const key = (await runToEnd(SERVICE_MAIN, ['keys', 'create', username], env)).trim();
  return { userId: created.user_id, username, name, timezone: created.timezone, key };
}

/** Migrates a new database at `path` with the service's own command and creates the Premium bench accounts and their keys. */
export function createBenchDatabase(path: string, env: NodeJS.ProcessEnv): Promise<BenchAccounts> {
  return createBenchAccounts(`sqlite:${path}`, env);
}

/** The same on any engine: migrates the (existing, empty) database `databaseUrl` names, then creates the bench accounts. */
export async function createBenchAccounts(databaseUrl: string, env: NodeJS.ProcessEnv): Promise<BenchAccounts> {
  const withDatabase = { ...env, DATABASE_URL: databaseUrl };
  await runToEnd(SERVICE_MAIN, ['migrate'], withDatabase);
  return {
    main: await createAccount(withDatabase, 'bench', 'Bench User'),
    timezones: await createAccount(withDatabase, 'bench-timezones', 'Bench Timezones'),
    names: await createAccount(withDatabase, 'bench-names', 'Bench Names'),
  };
}

/** Runs `work` in one write transaction on `db`: committed whole, or rolled back and rethrown. */
export function inTransaction(db: DatabaseSync, work: () => void): void {
  db.exec('BEGIN IMMEDIATE');
  try {
    work();
    db.exec('COMMIT');
  } catch (error) {
    db.exec('ROLLBACK');
    throw error;
  }
}

/**
 * Adds accounts, each with one key, until the database holds `total`, in one transaction. Only the bench account has a key
 * anyone knows: these have random hashes, since what the scaling table measures is the size of the tables.
 */
export function growAccounts(path: string, total: number): void {
  const db = new DatabaseSync(path, { enableForeignKeyConstraints: true });
  try {
    const counts = db.prepare('SELECT count(*) AS n, coalesce(max(id), 0) AS last FROM accounts').get()!;
    const before = Number(counts.n);
    const lastId = Number(counts.last);
    if (total <= before) return;
    const now = new Date().toISOString();
    inTransaction(db, () => {
      db.prepare(
        `WITH RECURSIVE n(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM n WHERE i < ?)
         INSERT INTO accounts (username, name, timezone, premium, created_at, updated_at)
         SELECT 'bulk' || i, 'Bulk account ' || i, 'UTC', i % 2, ?, ? FROM n`,
      ).run(lastId + 1, lastId + total - before, now, now);
      // A random head spreads the key ids over the index as real ones are; the id tail keeps them unique.
      db.prepare(
        `INSERT INTO api_keys (key_id, account_id, secret_hash, display_prefix, label, created_at)
         SELECT kid, id, randomblob(32), 'aapi_live_' || kid, NULL, ? FROM
           (SELECT id, substr(hex(randomblob(2)), 1, 4) || printf('%08d', id) AS kid FROM accounts WHERE id > ?)`,
      ).run(now, lastId);
    });
  } finally {
    db.close();
  }
}

/** Copies a closed database (and its WAL, should one be left) so each server under test starts from the same rows. */
export function copyDatabase(from: string, to: string): void {
  copyFileSync(from, to);
  if (existsSync(`${from}-wal`)) copyFileSync(`${from}-wal`, `${to}-wal`);
}
