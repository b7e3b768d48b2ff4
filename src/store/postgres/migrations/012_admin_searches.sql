-- migrate: outside a transaction
-- The operator's searches (issue 30); each statement commits on its own and is safe to run again from the top.
-- Accounts by username prefix (GET /admin/v0/accounts?username_prefix=): lower(username) LIKE 'ali%' can use a btree only
-- under text_pattern_ops whatever the database's collation (001's unique index compares by the collation). Built without
-- blocking writes, dropped first: a build that stopped half way leaves an invalid index behind.
DROP INDEX CONCURRENTLY IF EXISTS accounts_by_username_prefix;
CREATE INDEX CONCURRENTLY accounts_by_username_prefix ON accounts (lower(username) text_pattern_ops);
-- The audit trail filtered by actor and by action (GET /admin/v0/audit?actor=&action=, `account-api audit --actor --action`):
-- without these a rare actor's or action's newest entries are found by walking every partition back by id. Ending in id, each
-- day's index gives its entries in the order the list merges them. Made on the partitioned table (no CONCURRENTLY there), so
-- every partition has them and each day attached from now on gets them; the build holds writes to the trail while it runs
-- (docs/operations.md, "Keys and the audit trail").
CREATE INDEX IF NOT EXISTS audit_events_by_actor ON audit_events (actor, id);
CREATE INDEX IF NOT EXISTS audit_events_by_action ON audit_events (action, id);
