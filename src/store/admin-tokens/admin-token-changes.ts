// The audit entries both engines write beside an admin token's creation and revocation: never the token, only its id.
import type { AdminTokenRecord, NewAuditEvent } from '../store.ts';

export function adminTokenCreated(token: AdminTokenRecord): NewAuditEvent {
  return {
    action: 'admin_token.created',
    accountId: null,
    username: null,
    changes: { token_id: { old: null, new: token.tokenId }, label: { old: null, new: token.label } },
  };
}

export function adminTokenRevoked(token: AdminTokenRecord): NewAuditEvent {
  return {
    action: 'admin_token.revoked',
    accountId: null,
    username: null,
    changes: { token_id: { old: token.tokenId, new: token.tokenId }, revoked_at: { old: null, new: token.revokedAt } },
  };
}
