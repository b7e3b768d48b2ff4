// `account-api backup <file>`: a consistent copy of the SQLite database, taken while the server runs, put in place whole or not at all.
import { closeSync, existsSync, fsyncSync, linkSync, openSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type { Config } from '../config.ts';
import { DomainError } from '../domain/errors.ts';
import { openStore } from '../store/open-store.ts';
import { SqliteStore } from '../store/sqlite/sqlite-store.ts';
import { printJson, printLine, type CliContext } from './cli-context.ts';
import { DATABASE_FLAGS, type CommandGroup } from './command-spec.ts';

export const BACKUP: CommandGroup = {
  name: 'backup',
  summary: 'Copies of the database.',
  commands: [
    {
      words: ['backup'],
      args: ['file'],
      summary:
        'Writes a consistent copy of the SQLite database to FILE without stopping the server: every write committed when it ' +
        'starts is in it. It refuses to replace an existing FILE unless --force, and a PostgreSQL database (use pg_dump). ' +
        'To restore: stop the server, replace the database file with the copy, delete the old -wal and -shm files, start ' +
        '(docs/operations.md, "Backup and restore").',
      flags: { force: { type: 'boolean', help: 'replace FILE if it exists' }, ...DATABASE_FLAGS },
      examples: ['npx account-api backup /var/backups/account-api/$(date +%F).db', 'npx account-api backup --sandbox ./sandbox-copy.db --force'],
    },
  ],
};

function backupFailed(message: string, cause?: unknown): DomainError {
  return new DomainError('internal', 'backup_failed', message, { cause });
}

function fileExists(target: string): DomainError {
  return new DomainError('conflict', 'backup_file_exists', `${target} already exists; give --force to replace it, or another file name.`);
}

/** A backup that crashed half-way must never sit at FILE: it is written beside it, made durable, then given FILE's name. */
export async function backupCommand(context: CliContext, config: Config): Promise<void> {
  const { database } = config;
  if (database.engine !== 'sqlite') {
    throw new DomainError(
      'invalid',
      'backup_unsupported',
      'This database is PostgreSQL, and account-api backup copies SQLite only: use pg_dump and pg_restore (docs/operations.md, "Backup and restore").',
    );
  }
  if (database.path === ':memory:') throw new DomainError('invalid', 'backup_unsupported', 'An in-memory database (sqlite::memory:) has no file to back up.');
  // Opening a database that is not there would create an empty one, and back that up.
  if (!existsSync(database.path)) {
    throw new DomainError('not_found', 'database_not_found', `No database at ${database.path}: nothing to back up (check DATABASE_URL or --database-url).`);
  }
  const target = resolve(context.cwd, context.args[0]!);
  if (existsSync(target)) {
    // However it is spelled (a symlink, ./ or ../): replacing the database or its WAL under the server would corrupt it.
    const { dev, ino } = statSync(target);
    const own = [database.path, `${database.path}-wal`, `${database.path}-shm`].filter((path) => existsSync(path)).map((path) => statSync(path));
    if (own.some((file) => file.dev === dev && file.ino === ino)) {
      throw new DomainError('conflict', 'backup_file_exists', `${target} is the database itself: write the backup to another file.`);
    }
    if (!context.flags.force) throw fileExists(target);
  }
  const directory = dirname(target);
  if (!existsSync(directory) || !statSync(directory).isDirectory()) throw backupFailed(`No directory ${directory}: create it, or write the backup elsewhere.`);

  const partial = join(directory, `.${basename(target)}.${process.pid}.partial`);
  const store = openStore(config);
  const started = performance.now();
  try {
    if (!(store instanceof SqliteStore)) throw new Error('a SQLite database opened as another engine');
    let pages: number;
    try {
      pages = await store.backup(partial);
      const file = openSync(partial, 'r+');
      try {
        fsyncSync(file);
      } finally {
        closeSync(file);
      }
    } catch (error) {
      if (error instanceof DomainError) throw error;
      throw backupFailed(`Could not write ${partial}: ${(error as Error).message}`, error);
    }
    place(partial, target, context.flags.force);
    syncDirectory(directory);
    const bytes = statSync(target).size;
    const elapsedMs = Math.round(performance.now() - started);
    if (context.flags.json) return printJson(context, { database: database.path, backup: target, pages, bytes, elapsed_ms: elapsedMs });
    printLine(context, `Backed up SQLite at ${database.path} to ${target} (${pages} pages, ${bytes} bytes, ${elapsedMs} ms).`);
  } finally {
    await store.close();
    for (const leftover of ['', '-journal', '-wal', '-shm']) rmSync(`${partial}${leftover}`, { force: true });
  }
}

/** --force replaces FILE in one rename; without it, a link that fails if FILE appeared meanwhile (never overwriting it). */
function place(partial: string, target: string, replace: boolean): void {
  try {
    if (replace) renameSync(partial, target);
    else linkSync(partial, target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw fileExists(target);
    throw backupFailed(`Could not name the backup ${target}: ${(error as Error).message}`, error);
  }
}

/** The new name survives a power cut only once its directory is on disk too. */
function syncDirectory(directory: string): void {
  let handle: number | undefined;
  try {
    handle = openSync(directory, 'r');
    fsyncSync(handle);
  } catch {
    // Some file systems cannot sync a directory; the file itself is already on disk.
  } finally {
    if (handle !== undefined) closeSync(handle);
  }
}
