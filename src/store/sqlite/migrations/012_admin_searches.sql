-- The operator's searches (issue 30). The audit trail filtered by actor and by action (GET /admin/v0/audit?actor=&action=,
-- `account-api audit --actor --action`): without these a rare actor's or action's newest entries are found by walking the
-- whole trail back by id. The rowid ends every index, so each gives its entries in id order, as the list walks them.
-- Accounts by username prefix need nothing new: LIKE ... ESCAPE on the NOCASE username uses its unique index (001).
CREATE INDEX audit_events_by_actor ON audit_events (actor);
CREATE INDEX audit_events_by_action ON audit_events (action);
