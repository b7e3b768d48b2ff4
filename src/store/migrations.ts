// Reads a folder of numbered SQL files (001_initial.sql, ...) as an ordered list of migrations; each engine keeps its own folder.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

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

/** The message both engines give when a newer build has migrated the database past what this build knows. */
export function schemaTooNewMessage(found: number, newest: number): string {
  return (
    `The database schema is at version ${found}, newer than this build of account-api knows (${newest}). ` +
    'Run the newer build, or restore a backup made before it migrated.'
  );
}
