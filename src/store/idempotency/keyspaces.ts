// Where each owner's idempotency keys are kept: an account's in idempotency_keys, an admin token's in admin_idempotency_keys.
import type { IdempotencyOwner } from '../store.ts';

/** A table and its owner column, named only here (never from input), so the engines can put them into their SQL. */
export interface Keyspace {
  readonly table: 'idempotency_keys' | 'admin_idempotency_keys';
  readonly ownerColumn: 'account_id' | 'token_id';
  readonly owner: number | string;
}

export const KEYSPACE_TABLES = ['idempotency_keys', 'admin_idempotency_keys'] as const;

export function keyspaceOf(owner: IdempotencyOwner): Keyspace {
  return owner.adminTokenId === undefined
    ? { table: 'idempotency_keys', ownerColumn: 'account_id', owner: owner.accountId }
    : { table: 'admin_idempotency_keys', ownerColumn: 'token_id', owner: owner.adminTokenId };
}
