// An account's row as both engines select it, and its one mapping to an Account.
import type { Row, Values } from '../rows.ts';
import type { Account } from './account-store.ts';

export const ACCOUNT_COLUMNS = 'id, username, name, timezone, premium, created_at';

/** Also reads the account half of a credential's row (credentials/), and the account a webhook event carries. */
export function toAccount(row: Row, values: Values): Account {
  return {
    id: Number(row.id),
    username: String(row.username),
    name: String(row.name),
    timezone: String(row.timezone),
    premium: values.flag(row.premium),
    createdAt: values.time(row.created_at),
  };
}
