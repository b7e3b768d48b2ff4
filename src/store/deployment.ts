// Which environment (live or sandbox) a database belongs to: how migrate decides it once, and the refusals both engines raise.
import type { KeyEnvironment } from '../domain/api-keys.ts';
import { DomainError } from '../domain/errors.ts';

/**
 * `api_keys`: all held keys were of one environment; `migrator`: no keys, so the first migrator's; `operator`: keys of both,
 * chosen with `migrate --record-environment`.
 */
export type EnvironmentSource = 'api_keys' | 'migrator' | 'operator';

export interface RecordedEnvironment {
  readonly environment: KeyEnvironment;
  /** Null when recorded before. */
  readonly recordedNow: EnvironmentSource | null;
}

/** Revoked keys included: they say what the database has been used for. */
export interface KeysHeld {
  readonly live: boolean;
  readonly sandbox: boolean;
  /** Accounts without keys are still someone's data. */
  readonly accounts: boolean;
}

/** substr, not LIKE: `_` is a LIKE wildcard, and display_prefix starts with the full key prefix. */
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

/** The one its keys show, else the claimant's. */
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
  // Accounts without keys could be a live database whose keys were deleted: the sandbox never claims one unasked.
  if (keys.accounts && claimant === 'sandbox') {
    if (!operatorDecides) throw environmentUndecided();
    return { environment: claimant, source: 'operator' };
  }
  return { environment: claimant, source: 'migrator' };
}

export function asEnvironment(value: unknown): KeyEnvironment | null {
  return value === 'live' || value === 'sandbox' ? value : null;
}

/** Whatever URL reached it. */
export function assertEnvironment(recorded: KeyEnvironment, claimant: KeyEnvironment): void {
  if (recorded === claimant) return;
  throw new DomainError(
    'internal',
    'database_environment_mismatch',
    `This database belongs to ${NAMES[recorded]} (as recorded in its deployment table), and this is ${NAMES[claimant]}: ` +
      `${claimant === 'live' ? 'live account-api' : 'the sandbox'} refuses a ${recorded} database, whatever its URL. ${REMEDY[claimant]}`,
  );
}

/** Only migrate records the environment. */
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
