// Nothing a start does grows with the data: over many accounts on PostgreSQL, a start reads a handful of account rows, not the
// table (it asks whether any account exists, never how many).
import assert from 'node:assert/strict';
import { eventually } from '../support/eventually.ts';
import { createTestDatabase, postgresSkipReason, type TestDatabase } from '../support/postgres.ts';
import { requiring } from '../support/requiring.ts';
import { cliOk, createWorkspace, startServer, type Workspace } from '../support/server-process.ts';

const skip = await postgresSkipReason();
const { after, before, describe, test } = requiring(skip);

/** STARTUP_ACCOUNTS=10000000 (npm run test:at-size) for the size; 200,000 in npm test, enough for a count to show. */
const ACCOUNTS = Number(process.env.STARTUP_ACCOUNTS ?? 200_000);

interface Reads {
  readonly scans: number;
  readonly rowsRead: number;
}

/** What PostgreSQL's statistics say was read of the accounts table since its counters were reset. */
async function accountReads(database: TestDatabase): Promise<Reads> {
  const { rows } = await database.query(
    // Index entries read count too: count(*) may well walk the primary key's index instead of the table.
    `SELECT coalesce(t.seq_scan, 0) + coalesce(t.idx_scan, 0) AS scans,
            coalesce(t.seq_tup_read, 0) + (SELECT coalesce(sum(i.idx_tup_read), 0) FROM pg_stat_user_indexes i WHERE i.relid = t.relid) AS rows_read
     FROM pg_stat_user_tables t WHERE t.relname = 'accounts'`,
  );
  return { scans: Number(rows[0].scans), rowsRead: Number(rows[0].rows_read) };
}

describe('a start over many accounts on PostgreSQL', () => {
  let database: TestDatabase;
  let workspace: Workspace;

  before(async () => {
    database = await createTestDatabase();
    // At size (npm run test:at-size) also a statement timeout that a count over 10^7 rows (1.4 s) passes, failing the start as it
    // did before issue 28; in npm test the default, so that a busy machine cannot fail a trivial statement.
    workspace = createWorkspace({ DATABASE_URL: database.url, PG_STATEMENT_TIMEOUT_MS: process.env.STARTUP_STATEMENT_TIMEOUT_MS ?? '5000' });
    await cliOk(workspace, ['migrate'], { PG_STATEMENT_TIMEOUT_MS: '600000' });
    await database.query(
      `INSERT INTO accounts (username, name, timezone, premium, created_at, updated_at)
       SELECT 'bulk' || i, 'Bulk account', 'UTC', false, now(), now() FROM generate_series(1, $1::int) i`,
      [ACCOUNTS],
    );
    await database.query('ANALYZE accounts');
  });

  after(async () => {
    await database?.drop();
    workspace?.cleanup();
  });

  test('reads a few account rows, not the table: one probe whether any exists', async () => {
    await database.query("SELECT pg_stat_reset_single_table_counters('accounts'::regclass)");
    const server = await startServer(workspace);
    // Its backends report their statistics when they end: stopping the server ends them.
    await server.stop();
    // The start looked at the table (so the figures are in), and read next to nothing of it; a count(*) reads every row.
    const reads = await eventually('the start-up read of accounts in the statistics', () => accountReads(database), (seen) => seen.scans >= 1);
    assert.ok(reads.rowsRead < 100, `a start read ${reads.rowsRead} account rows of ${ACCOUNTS}: something at start scans the table`);
  });
});
