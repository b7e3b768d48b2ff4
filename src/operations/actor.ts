// Who is acting, as every domain operation takes it and the audit trail records it.
import type { AuditActor } from '../store/store.ts';

export type { AuditActor, AuditAction, AuditEvent } from '../store/store.ts';
export { AUDIT_ACTIONS } from '../store/store.ts';

/** A call of the public API, authenticated by this key. */
export function keyActor(keyId: string, requestId: string | null, address: string | null): AuditActor {
  return { actor: `key:${keyId}`, requestId, address };
}

/** A call of the admin API, authenticated by this admin token. */
export function adminActor(tokenId: string, requestId: string | null, address: string | null): AuditActor {
  return { actor: `admin:${tokenId}`, requestId, address };
}

/** A command run by this operating-system user; no request, no address. */
export function cliActor(osUser: string): AuditActor {
  return { actor: `cli:${osUser}`, requestId: null, address: null };
}
