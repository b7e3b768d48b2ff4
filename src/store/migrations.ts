// Reads a folder of numbered SQL files (001_initial.sql, ...) as an ordered list of migrations; each engine keeps its own folder.
// Also the schema checks both engines make against the versions their schema_migrations table lists.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DomainError } from '../domain/errors.ts';

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

const FILE_PATTERN = /^(\d{3})_([a-z0-9_]+)\.sql$/;

export function loadMigrations(dir: string): Migration[] {
  const migrations = readdirSync(dir)
    .map((file) => ({ file, match: FILE_PATTERN.exec(file) }))
    .filter((entry) => entry.match !== null)
    .map(({ file, match }) => ({
      version: Number(match![1]),
      name: match![2]!,
      sql: readFileSync(join(dir, file), 'utf8'),
    }))
    .sort((a, b) => a.version - b.version);
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new Error(`Migrations must be numbered 001, 002, ... without gaps; found ${migration.version} at position ${index + 1}.`);
    }
  });
  return migrations;
}

/** Refuses a database a newer build has migrated past what this build knows (after a rollback, say). */
export function assertNotNewer(applied: readonly number[], migrations: readonly Migration[]): void {
  const newest = migrations.at(-1)?.version ?? 0;
  const unknown = applied.filter((version) => version > newest);
  if (unknown.length > 0) {
    const found = Math.max(...unknown);
    throw new DomainError(
      'internal',
      'schema_too_new',
      `The database schema is at version ${found}, newer than this build of account-api knows (${newest}). ` +
        'Run the newer build, or restore a backup made before it migrated.',
    );
  }
}

/** What checkSchema promises: not migrated by a newer build, and nothing of this build's left to apply. */
export function assertSchemaCurrent(applied: readonly number[], migrations: readonly Migration[]): void {
  assertNotNewer(applied, migrations);
  const missing = migrations.filter((migration) => !applied.includes(migration.version));
  if (missing.length > 0) {
    throw new DomainError(
      'internal',
      'schema_outdated',
      `The database is missing migrations ${missing.map((m) => m.version).join(', ')}; run 'account-api migrate'.`,
    );
  }
}
