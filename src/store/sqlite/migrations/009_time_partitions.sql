-- Twin of PostgreSQL's 009 (issue 29): PostgreSQL swaps in the tables partitioned by day. SQLite keeps one table each, pruned by
-- bounded batched deletes; nothing changes.
SELECT 1;
