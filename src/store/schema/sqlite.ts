// The schema on SQLite: numbered migrations (sqlite/migrations/) applied in order, and the deployment table that records, or
// reads back, the environment a database belongs to, in the same transaction.
import { join } from 'node:path';
import type { KeyEnvironment } from '../../domain/api-keys.ts';
import { asEnvironment, assertEnvironment, environmentToRecord, environmentUnrecorded, KEYS_HELD_SQL, type RecordedEnvironment } from '../deployment.ts';
import { assertNotNewer, assertSchemaCurrent, loadMigrations, type Migration } from '../migrations.ts';
import type { Prepare, SqliteEngine } from '../sqlite/sqlite-engine.ts';
import type { MigrateOptions, MigrationReport, SchemaStore } from './schema-store.ts';

export function readEnvironment(statement: Prepare): KeyEnvironment | null {
  return asEnvironment(statement('SELECT environment FROM deployment WHERE id = 1').get()?.environment);
}

/**
 * Records the environment if none is recorded yet, and returns the one recorded. Called inside BEGIN IMMEDIATE, which holds
 * the database's write lock from before the read to after the write: another process cannot record in between.
 */
export function recordEnvironment(statement: Prepare, claimant: KeyEnvironment, operatorDecides: boolean): RecordedEnvironment {
  const recorded = readEnvironment(statement);
  if (recorded !== null) return { environment: recorded, recordedNow: null };
  const keys = statement(KEYS_HELD_SQL).get()!;
  const choice = environmentToRecord({ live: Number(keys.live) === 1, sandbox: Number(keys.sandbox) === 1, accounts: Number(keys.accounts) === 1 }, claimant, operatorDecides);
  statement('INSERT INTO deployment (id, environment, decided_by, recorded_at) VALUES (1, ?, ?, ?)').run(
    choice.environment,
    choice.source,
    new Date().toISOString(),
  );
  return { environment: choice.environment, recordedNow: choice.source };
}

export class SqliteSchema implements SchemaStore {
  readonly #engine: SqliteEngine;
  readonly #environment: KeyEnvironment;
  readonly #migrations: readonly Migration[];

  constructor(engine: SqliteEngine, environment: KeyEnvironment) {
    this.#engine = engine;
    this.#environment = environment;
    this.#migrations = loadMigrations(join(import.meta.dirname, '../sqlite/migrations'));
  }

  #appliedVersions(): number[] {
    this.#engine.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
    );
    return this.#engine
      .statement('SELECT version FROM schema_migrations ORDER BY version')
      .all()
      .map((row) => Number(row.version));
  }

  /** Migrations and the environment's record or check in one transaction: a refused migrate leaves the database as it was. */
  migrate(options: MigrateOptions = {}): Promise<MigrationReport> {
    const statement = this.#engine.statement;
    return this.#engine.run(() =>
      this.#engine.transaction(() => {
        const applied = this.#appliedVersions();
        assertNotNewer(applied, this.#migrations);
        const done = new Set(applied);
        const now = new Date().toISOString();
        const newlyApplied: number[] = [];
        for (const migration of this.#migrations) {
          if (done.has(migration.version)) continue;
          this.#engine.exec(migration.sql);
          statement('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(migration.version, migration.name, now);
          newlyApplied.push(migration.version);
        }
        const recorded = recordEnvironment(statement, this.#environment, options.recordEnvironment === true);
        assertEnvironment(recorded.environment, this.#environment);
        return {
          applied: newlyApplied,
          current: this.#migrations.at(-1)?.version ?? 0,
          environment: recorded.environment,
          environmentRecorded: recorded.recordedNow,
        };
      }),
    );
  }

  checkSchema(): Promise<void> {
    return this.#engine.run(() => {
      assertSchemaCurrent(this.#appliedVersions(), this.#migrations);
      const recorded = readEnvironment(this.#engine.statement);
      if (recorded === null) throw environmentUnrecorded();
      assertEnvironment(recorded, this.#environment);
    });
  }
}
