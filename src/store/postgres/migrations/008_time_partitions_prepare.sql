-- migrate: outside a transaction
-- Time partitions (issue 29), step 1 of 2: everything that reads or writes many rows, done while writes go on; each statement
-- commits on its own, and each is safe to run again should the migration stop half way (it is then run from the top).
-- The old tables become the first partition of their partitioned successor (009), which holds every row before the cutover:
-- the start of the UTC day after tomorrow, so rows written until 009 has run still fall inside it. Later rows go to daily
-- partitions made ahead (audit/time-partitions.ts). docs/operations.md gives the locks taken and the times measured.
CREATE TABLE IF NOT EXISTS partitioning_cutover (id integer PRIMARY KEY CHECK (id = 1), until timestamptz NOT NULL);
INSERT INTO partitioning_cutover (id, until)
  VALUES (1, (date_trunc('day', now() AT TIME ZONE 'UTC') + interval '2 days') AT TIME ZONE 'UTC') ON CONFLICT (id) DO NOTHING;

-- A delivery is kept in its event's partition, so it shares the event's created_at; a redelivery used to take the time it
-- was queued (only those rows change).
UPDATE webhook_deliveries d SET created_at = ev.created_at FROM webhook_events ev
  WHERE ev.event_id = d.event_id AND d.created_at <> ev.created_at;

-- Each old table's rows all fall before the cutover: said by a CHECK added NOT VALID (a brief ACCESS EXCLUSIVE lock, no
-- scan), then validated (a scan under SHARE UPDATE EXCLUSIVE: reads and writes go on), so ATTACH PARTITION need not scan.
DO $$
DECLARE
  until text := (SELECT quote_literal(until) FROM partitioning_cutover);
  target record;
BEGIN
  FOR target IN SELECT * FROM (VALUES ('audit_events', 'occurred_at'), ('webhook_events', 'created_at'),
      ('webhook_deliveries', 'created_at'), ('webhook_attempts', 'attempted_at')) AS t (name, key_column) LOOP
    IF NOT EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = to_regclass(target.name) AND conname = target.name || '_before_cutover') THEN
      EXECUTE format('ALTER TABLE %I ADD CONSTRAINT %I CHECK (%I < %s::timestamptz) NOT VALID',
        target.name, target.name || '_before_cutover', target.key_column, until);
    END IF;
  END LOOP;
END $$;
ALTER TABLE audit_events VALIDATE CONSTRAINT audit_events_before_cutover;
ALTER TABLE webhook_events VALIDATE CONSTRAINT webhook_events_before_cutover;
ALTER TABLE webhook_deliveries VALIDATE CONSTRAINT webhook_deliveries_before_cutover;
ALTER TABLE webhook_attempts VALIDATE CONSTRAINT webhook_attempts_before_cutover;

-- A partitioned table's primary key includes its partition key: the old tables get the matching unique index, built
-- without blocking writes (dropped first: a build that stopped half way leaves an invalid index behind).
DROP INDEX CONCURRENTLY IF EXISTS audit_events_until_pkey;
CREATE UNIQUE INDEX CONCURRENTLY audit_events_until_pkey ON audit_events (id, occurred_at);
DROP INDEX CONCURRENTLY IF EXISTS webhook_events_until_pkey;
CREATE UNIQUE INDEX CONCURRENTLY webhook_events_until_pkey ON webhook_events (event_id, created_at);
DROP INDEX CONCURRENTLY IF EXISTS webhook_deliveries_until_pkey;
CREATE UNIQUE INDEX CONCURRENTLY webhook_deliveries_until_pkey ON webhook_deliveries (delivery_id, created_at);
DROP INDEX CONCURRENTLY IF EXISTS webhook_attempts_until_pkey;
CREATE UNIQUE INDEX CONCURRENTLY webhook_attempts_until_pkey ON webhook_attempts (attempt_id, attempted_at);
