// The database's schema and environment: migrations applied, or checked by a process that must not apply them; no SQL here.
import type { KeyEnvironment } from '../../domain/api-keys.ts';
import type { EnvironmentSource } from '../deployment.ts';

export interface MigrationReport {
  readonly applied: readonly number[];
  readonly current: number;
  /** The environment the database belongs to: always the store's own, or migrate would have failed. */
  readonly environment: KeyEnvironment;
  /** How this migrate decided the environment, when it recorded it; null when the database already recorded it. */
  readonly environmentRecorded: EnvironmentSource | null;
}

export interface MigrateOptions {
  /**
   * The operator's decision for a database that records no environment yet and holds keys of both: record the store's own.
   * Without it such a database is refused; with it, a database that already records an environment is still only checked.
   */
  readonly recordEnvironment?: boolean;
}

export interface SchemaStore {
  /**
   * Applies missing migrations, then records the database's environment if it has none yet, or checks it, atomically:
   * of two stores of different environments migrating one new database at once, exactly one succeeds.
   * Fails with `database_environment_mismatch` or `database_environment_undecided` (then the report is never returned).
   */
  migrate(options?: MigrateOptions): Promise<MigrationReport>;
  /**
   * Fails with `schema_too_new` when the database was migrated by a newer build, `schema_outdated` when it lacks migrations,
   * and `database_environment_mismatch` (or `_unrecorded`) unless it records the store's environment.
   */
  checkSchema(): Promise<void>;
}
