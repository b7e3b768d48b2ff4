// A console session's row as both engines select it (joined with its admin token), and its one mapping to a ConsoleSession.
import type { Row, Values } from '../rows.ts';
import type { ConsoleSession } from './console-session-store.ts';

/** The columns of `console_sessions s LEFT JOIN admin_tokens t`: a session whose token is gone counts as revoked. */
export const CONSOLE_SESSION_COLUMNS = 's.token_id, s.created_at, s.last_seen_at, (t.token_id IS NULL OR t.revoked_at IS NOT NULL) AS token_revoked';

export function toConsoleSession(row: Row, values: Values): ConsoleSession {
  return {
    tokenId: String(row.token_id),
    createdAt: new Date(values.time(row.created_at)),
    lastSeenAt: new Date(values.time(row.last_seen_at)),
    tokenRevoked: values.flag(row.token_revoked),
  };
}
