// The deployment table on SQLite: records, or reads back, the environment a database belongs to, inside migrate's transaction.
import type { DatabaseSync } from 'node:sqlite';
import type { KeyEnvironment } from '../../domain/api-keys.ts';
import { asEnvironment, environmentToRecord, KEYS_HELD_SQL, type RecordedEnvironment } from '../deployment.ts';

export function readEnvironment(db: DatabaseSync): KeyEnvironment | null {
  return asEnvironment(db.prepare('SELECT environment FROM deployment WHERE id = 1').get()?.environment);
}

/**
 * Records the environment if none is recorded yet, and returns the one recorded. Called inside BEGIN IMMEDIATE, which holds
 * the database's write lock from before the read to after the write: another process cannot record in between.
 */
export function recordEnvironment(db: DatabaseSync, claimant: KeyEnvironment, operatorDecides: boolean): RecordedEnvironment {
  const recorded = readEnvironment(db);
  if (recorded !== null) return { environment: recorded, recordedNow: null };
  const keys = db.prepare(KEYS_HELD_SQL).get()!;
  const choice = environmentToRecord({ live: Number(keys.live) === 1, sandbox: Number(keys.sandbox) === 1, accounts: Number(keys.accounts) === 1 }, claimant, operatorDecides);
  db.prepare('INSERT INTO deployment (id, environment, decided_by, recorded_at) VALUES (1, ?, ?, ?)').run(
    choice.environment,
    choice.source,
    new Date().toISOString(),
  );
  return { environment: choice.environment, recordedNow: choice.source };
}
