// Which environment (live or sandbox) a database belongs to: how migrate decides it once, and the refusals both engines raise.
import type { KeyEnvironment } from '../domain/api-keys.ts';
import { DomainError } from '../domain/errors.ts';

/**
 * How the recorded environment was decided, kept beside it in the deployment table:
 * - `api_keys`: the database already held API keys, all of that environment (a database made before migration 002);
 * - `migrator`: it held no keys (a new database, say), so the environment of the process that migrated it first;
 * - `operator`: it held keys of both environments, and an operator chose with `account-api migrate --record-environment`.
 */
export type EnvironmentSource = 'api_keys' | 'migrator' | 'operator';

export interface RecordedEnvironment {
  readonly environment: KeyEnvironment;
  /** How this migrate decided it; null when it was recorded before. */
  readonly recordedNow: EnvironmentSource | null;
}

/** Which kinds of API key a database holds, revoked ones included: they say what the database has been used for. */
export interface KeysHeld {
  readonly live: boolean;
  readonly sandbox: boolean;
  /** Whether it holds any account at all: accounts without keys are still someone's data. */
  readonly accounts: boolean;
}

/**
 * Both engines' one query for KeysHeld. display_prefix starts with the key's full prefix (aapi_live_ or aapi_sandbox_, see
 * domain/api-keys.ts), compared with substr because `_` is a wildcard to LIKE.
 */
export const KEYS_HELD_SQL = `SELECT
  EXISTS (SELECT 1 FROM api_keys WHERE substr(display_prefix, 1, 10) = 'aapi_live_') AS live,
  EXISTS (SELECT 1 FROM api_keys WHERE substr(display_prefix, 1, 13) = 'aapi_sandbox_') AS sandbox,
  EXISTS (SELECT 1 FROM accounts) AS accounts`;

const NAMES: Readonly<Record<KeyEnvironment, string>> = { live: 'the live environment', sandbox: 'the sandbox' };

const REMEDY: Readonly<Record<KeyEnvironment, string>> = {
  sandbox:
    'Give the sandbox a database of its own: set SANDBOX_DATABASE_URL (or --database-url) to another database, ' +
    'such as sqlite:./data/sandbox.db.',
  live: 'Point DATABASE_URL (or --database-url) at the live database, or add --sandbox to use this database as the sandbox.',
};

/** What a database with no environment recorded yet gets: the one its keys show, else the claimant's. */
export function environmentToRecord(
  keys: KeysHeld,
  claimant: KeyEnvironment,
  operatorDecides: boolean,
): { environment: KeyEnvironment; source: EnvironmentSource } {
  if (keys.live && keys.sandbox) {
    if (!operatorDecides) throw environmentUndecided();
    return { environment: claimant, source: 'operator' };
  }
  if (keys.live) return { environment: 'live', source: 'api_keys' };
  if (keys.sandbox) return { environment: 'sandbox', source: 'api_keys' };
  // Accounts but no keys could be a live database whose keys were all deleted: the sandbox, which seeds accounts of its
  // own, never claims one unasked; the live server may (it is what such a database most likely is).
  if (keys.accounts && claimant === 'sandbox') {
    if (!operatorDecides) throw environmentUndecided();
    return { environment: claimant, source: 'operator' };
  }
  return { environment: claimant, source: 'migrator' };
}

/** The deployment table's environment as read; null when it has no row yet. */
export function asEnvironment(value: unknown): KeyEnvironment | null {
  return value === 'live' || value === 'sandbox' ? value : null;
}

/** Refuses a database recorded as the other environment, whatever URL reached it. */
export function assertEnvironment(recorded: KeyEnvironment, claimant: KeyEnvironment): void {
  if (recorded === claimant) return;
  throw new DomainError(
    'internal',
    'database_environment_mismatch',
    `This database belongs to ${NAMES[recorded]} (as recorded in its deployment table), and this is ${NAMES[claimant]}: ` +
      `${claimant === 'live' ? 'live account-api' : 'the sandbox'} refuses a ${recorded} database, whatever its URL. ${REMEDY[claimant]}`,
  );
}

/** checkSchema on a database whose environment is not recorded: only migrate records it. */
export function environmentUnrecorded(): DomainError {
  return new DomainError(
    'internal',
    'database_environment_unrecorded',
    "The database does not record whether it is live or the sandbox's; run 'account-api migrate' (with --sandbox for the sandbox).",
  );
}

function environmentUndecided(): DomainError {
  return new DomainError(
    'internal',
    'database_environment_undecided',
    'This database records no environment yet and holds both live (aapi_live_) and sandbox (aapi_sandbox_) API keys, ' +
      'so account-api cannot tell whether it is the live database or the sandbox. An operator must decide: check which ' +
      "accounts hold keys of the other environment (docs/operations.md), then run 'account-api migrate --record-environment' " +
      "against it to record it as live, or 'account-api migrate --sandbox --record-environment' to record it as the sandbox.",
  );
}
