// Reads a folder of numbered SQL files (001_initial.sql, ...) as an ordered list of migrations; each engine keeps its own folder.
// Also the schema checks both engines make against the versions their schema_migrations table lists.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DomainError } from '../domain/errors.ts';

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
  /**
   * False for a file opening with OUTSIDE_A_TRANSACTION: its statements run one by one, each committing on its own, as
   * CREATE INDEX CONCURRENTLY must (PostgreSQL only). Such a file must be safe to run again from the top.
   */
  readonly transactional?: boolean;
}

/** The first line of a migration whose statements must each run on their own. */
export const OUTSIDE_A_TRANSACTION = '-- migrate: outside a transaction';

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
    .map((migration) => ({ ...migration, transactional: !migration.sql.startsWith(OUTSIDE_A_TRANSACTION) }))
    .sort((a, b) => a.version - b.version);
  migrations.forEach((migration, index) => {
    if (migration.version !== index + 1) {
      throw new Error(`Migrations must be numbered 001, 002, ... without gaps; found ${migration.version} at position ${index + 1}.`);
    }
  });
  return migrations;
}

/**
 * A migration file's statements, for one run outside a transaction: split at a semicolon ending a line, except inside a
 * dollar-quoted body (a DO block); statements made only of comments are left out.
 */
export function migrationStatements(sql: string): string[] {
  const statements: string[] = [];
  let current: string[] = [];
  let inBody = false;
  for (const line of sql.split('\n')) {
    current.push(line);
    if ((line.match(/\$\$/g)?.length ?? 0) % 2 === 1) inBody = !inBody;
    if (!inBody && line.trimEnd().endsWith(';')) {
      statements.push(current.join('\n'));
      current = [];
    }
  }
  statements.push(current.join('\n'));
  return statements.filter((statement) => statement.split('\n').some((line) => line.trim() !== '' && !line.trim().startsWith('--')));
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
