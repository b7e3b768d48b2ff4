// Making and revoking admin tokens: the one place their rules live (label, format, who made it), for the CLI to call.
import { checkAdminTokenLabel, issueAdminToken, ADMIN_TOKEN_ID_PATTERN, ADMIN_TOKEN_LABEL_MAX } from '../domain/admin-tokens.ts';
import type { KeyEnvironment } from '../domain/api-keys.ts';
import { DomainError } from '../domain/errors.ts';
import type { AdminTokenRecord, AdminTokenStore, AuditActor } from '../store/store.ts';

export interface CreatedAdminToken {
  readonly record: AdminTokenRecord;
  /** The whole token, this once: only its hash is stored. */
  readonly token: string;
}

/**
 * Recorded as admin_token.created by `actor` (the CLI's `cli:<os user>`), in the token's own transaction. `environment`: the
 * database's (the CLI's --sandbox), whose marker the token carries, so that the other server tells its bearer so.
 */
export async function createAdminToken(store: AdminTokenStore, actor: AuditActor, label: string, environment: KeyEnvironment): Promise<CreatedAdminToken> {
  const checked = checkAdminTokenLabel(label);
  if (checked === null) {
    throw new DomainError(
      'invalid',
      'invalid_label',
      `An admin token's label names who holds it: 1 to ${ADMIN_TOKEN_LABEL_MAX} characters, without control characters.`,
      { field: 'label' },
    );
  }
  const issued = issueAdminToken(environment);
  const record = await store.createAdminToken({
    tokenId: issued.tokenId,
    hash: issued.hash,
    displayPrefix: issued.displayPrefix,
    label: checked,
    createdBy: actor.actor,
  }, actor);
  return { record, token: issued.token };
}

/** Recorded as admin_token.revoked, once: revoking again changes nothing and records nothing. */
export async function revokeAdminToken(store: AdminTokenStore, actor: AuditActor, tokenId: string): Promise<AdminTokenRecord> {
  if (!ADMIN_TOKEN_ID_PATTERN.test(tokenId)) {
    throw new DomainError('invalid', 'invalid_token_id', `'${tokenId}' is not an admin token id: the 12 characters after aapi_admin_ (aapi_admin_sandbox_ in the sandbox), as 'admin-tokens list' shows.`, {
      field: 'token_id',
    });
  }
  return store.revokeAdminToken(tokenId, actor);
}
