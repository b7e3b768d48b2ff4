// The deployment table on PostgreSQL: records, or reads back, the environment a database belongs to, on migrate's connection.
import type pg from 'pg';
import type { KeyEnvironment } from '../../domain/api-keys.ts';
import { asEnvironment, environmentToRecord, KEYS_HELD_SQL, type RecordedEnvironment } from '../deployment.ts';

export const READ_ENVIRONMENT_SQL = 'SELECT environment FROM deployment WHERE id = 1';

/**
 * Records the environment if none is recorded yet, and returns the one recorded. Runs in a transaction under the migration
 * lock; should another session record it in between all the same (by hand, or an older build without the lock), the insert
 * does nothing and the row read back is the one that counts.
 */
export async function recordEnvironment(client: pg.ClientBase, claimant: KeyEnvironment, operatorDecides: boolean): Promise<RecordedEnvironment> {
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
