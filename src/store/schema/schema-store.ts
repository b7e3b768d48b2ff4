// The database's schema and environment: migrations applied, or checked by a process that must not apply them; no SQL here.
import type { KeyEnvironment } from '../../domain/api-keys.ts';
import type { EnvironmentSource } from '../deployment.ts';

export interface MigrationReport {
  readonly applied: readonly number[];
  readonly current: number;
  /** Always the store's own, or migrate would have failed. */
  readonly environment: KeyEnvironment;
  /** Null when the database already recorded it. */
  readonly environmentRecorded: EnvironmentSource | null;
}

export interface MigrateOptions {
  /** The operator's choice for an unrecorded database holding keys of both: record the store's own (else refused). */
  readonly recordEnvironment?: boolean;
}

export interface SchemaStore {
  /**
   * Applies migrations, then records or checks the environment atomically: of two environments migrating one new database
   * at once, exactly one succeeds. Fails with `database_environment_mismatch` or `database_environment_undecided`.
   */
  migrate(options?: MigrateOptions): Promise<MigrationReport>;
  /** `schema_too_new`, `schema_outdated`, or `database_environment_mismatch` (`_unrecorded`) unless the store's environment. */
  checkSchema(): Promise<void>;
}
