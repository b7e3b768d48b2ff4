// The schema and the environment record in PostgreSQL: migrate applies what is missing (postgres/migrate.ts) and records the
// environment a database belongs to in its deployment table, or checks it; checkSchema only reads.
import type pg from 'pg';
import type { KeyEnvironment } from '../../domain/api-keys.ts';
import { asEnvironment, assertEnvironment, environmentToRecord, environmentUnrecorded, KEYS_HELD_SQL, type RecordedEnvironment } from '../deployment.ts';
import { makePartitionsAhead } from '../audit/time-partitions.ts';
import { assertSchemaCurrent, type Migration } from '../migrations.ts';
import { applyMigrations, loadPostgresMigrations } from '../postgres/migrate.ts';
import { PostgresPart, type PostgresEngine } from '../postgres/postgres-engine.ts';
import type { MigrateOptions, MigrationReport, SchemaStore } from './schema-store.ts';

const READ_ENVIRONMENT_SQL = 'SELECT environment FROM deployment WHERE id = 1';

/**
 * Records the environment if none is recorded yet, and returns the one recorded. Runs in a transaction under the migration
 * lock; should another session record it in between all the same (by hand, or an older build without the lock), the insert
 * does nothing and the row read back is the one that counts.
 */
async function recordEnvironment(client: pg.ClientBase, claimant: KeyEnvironment, operatorDecides: boolean): Promise<RecordedEnvironment> {
  const recorded = asEnvironment((await client.query(READ_ENVIRONMENT_SQL)).rows[0]?.environment);
  if (recorded !== null) return { environment: recorded, recordedNow: null };
  const keys = (await client.query(KEYS_HELD_SQL)).rows[0];
  const choice = environmentToRecord({ live: keys?.live === true, sandbox: keys?.sandbox === true, accounts: keys?.accounts === true }, claimant, operatorDecides);
  const inserted = await client.query(
    `INSERT INTO deployment (id, environment, decided_by, recorded_at) VALUES (1, $1, $2, now())
     ON CONFLICT (id) DO NOTHING RETURNING environment`,
    [choice.environment, choice.source],
  );
  if (inserted.rowCount === 1) return { environment: choice.environment, recordedNow: choice.source };
  const winner = asEnvironment((await client.query(READ_ENVIRONMENT_SQL)).rows[0]?.environment);
  if (winner === null) throw new Error('The deployment row vanished while it was being recorded.');
  return { environment: winner, recordedNow: null };
}

export class PostgresSchema extends PostgresPart implements SchemaStore {
  readonly #environment: KeyEnvironment;
  readonly #migrations: readonly Migration[] = loadPostgresMigrations();

  constructor(engine: PostgresEngine, environment: KeyEnvironment) {
    super(engine);
    this.#environment = environment;
  }

  /**
   * Applies what is missing under an advisory lock, so instances starting together against an empty database never race;
   * then, under the same lock and in one transaction, records the environment or checks it (rolled back if refused).
   */
  async migrate(options: MigrateOptions = {}): Promise<MigrationReport> {
    let recorded: RecordedEnvironment | undefined;
    const report = await applyMigrations(this.engine.connection, this.#migrations, async (client) => {
      recorded = await recordEnvironment(client, this.#environment, options.recordEnvironment === true);
      assertEnvironment(recorded.environment, this.#environment);
    });
    // A fresh database has its days ahead before its first write; serve's hourly run keeps them coming (time-partitions.ts).
    await makePartitionsAhead(this.engine, new Date());
    return { ...report, environment: recorded!.environment, environmentRecorded: recorded!.recordedNow };
  }

  async checkSchema(): Promise<void> {
    // Read-only: a database nobody migrated has no schema_migrations yet, and that is "outdated", not an error.
    const table = await this.engine.one("SELECT to_regclass('schema_migrations') IS NOT NULL AS present");
    const applied =
      table?.present === true
        ? (await this.engine.query('SELECT version FROM schema_migrations ORDER BY version')).map((row) => Number(row.version))
        : [];
    assertSchemaCurrent(applied, this.#migrations);
    const recorded = asEnvironment((await this.engine.one(READ_ENVIRONMENT_SQL))?.environment);
    if (recorded === null) throw environmentUnrecorded();
    assertEnvironment(recorded, this.#environment);
  }
}
