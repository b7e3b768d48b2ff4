-- Twin of PostgreSQL's 008 (issue 29), so a schema version means the same on both engines: PostgreSQL prepares to partition
-- the audit trail and the webhook outbox by day. SQLite keeps one table each, pruned by bounded batched deletes; nothing changes.
SELECT 1;
