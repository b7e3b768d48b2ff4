-- Time partitions (issue 29), step 2 of 2, one transaction that only changes the catalog: each old table is renamed to its
-- first partition (<table>_until_<cutover day>, holding every row before the cutover), and a partitioned table of the same
-- name takes its place with the old one attached (008's validated CHECK spares the scan, its indexes are attached, not
-- built) and a DEFAULT partition, so an insert never fails for want of a partition. Daily partitions from the cutover on
-- are made ahead and dropped once expired by audit/time-partitions.ts. Ids keep counting from where they were.
-- Deliveries no longer reference events, nor attempts deliveries: a foreign key to a partitioned table would have every
-- partition drop check the rows referring to it; the three are dropped by partition, by time, instead.
DO $$
DECLARE
  until timestamptz := (SELECT until FROM partitioning_cutover);
  day text := to_char(until AT TIME ZONE 'UTC', 'YYYYMMDD');
  next_id bigint;
BEGIN
  -- The order every write takes them in (an audit entry, its event, its deliveries), so no write deadlocks with this.
  LOCK TABLE audit_events, webhook_events, webhook_deliveries, webhook_attempts IN ACCESS EXCLUSIVE MODE;
  ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_event_id_fkey;
  ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_delivery_id_fkey;

  -- The audit trail, by occurred_at.
  next_id := coalesce(pg_sequence_last_value(pg_get_serial_sequence('audit_events', 'id')), 0) + 1;
  ALTER TABLE audit_events ALTER COLUMN id DROP IDENTITY;
  ALTER TABLE audit_events DROP CONSTRAINT audit_events_pkey, ADD CONSTRAINT audit_events_until_pkey PRIMARY KEY USING INDEX audit_events_until_pkey;
  ALTER INDEX audit_events_by_time RENAME TO audit_events_until_by_time;
  ALTER INDEX audit_events_by_username RENAME TO audit_events_until_by_username;
  EXECUTE format('ALTER TABLE audit_events RENAME TO %I', 'audit_events_until_' || day);
  CREATE TABLE audit_events (
    id           bigint      GENERATED ALWAYS AS IDENTITY,
    occurred_at  timestamptz NOT NULL,
    actor        text        NOT NULL,
    action       text        NOT NULL,
    account_id   bigint,
    username     text,
    changes      jsonb       NOT NULL DEFAULT '{}',
    request_id   text,
    address      text,
    PRIMARY KEY (id, occurred_at)
  ) PARTITION BY RANGE (occurred_at);
  CREATE INDEX audit_events_by_time ON audit_events (occurred_at);
  CREATE INDEX audit_events_by_username ON audit_events (lower(username), occurred_at);
  EXECUTE format('ALTER TABLE audit_events ALTER COLUMN id RESTART WITH %s', next_id);
  EXECUTE format('ALTER TABLE audit_events ATTACH PARTITION %I FOR VALUES FROM (MINVALUE) TO (%L)', 'audit_events_until_' || day, until);
  EXECUTE format('ALTER TABLE %I DROP CONSTRAINT audit_events_before_cutover', 'audit_events_until_' || day);
  CREATE TABLE audit_events_default PARTITION OF audit_events DEFAULT;

  -- The outbox's events, by created_at.
  ALTER TABLE webhook_events DROP CONSTRAINT webhook_events_pkey, ADD CONSTRAINT webhook_events_until_pkey PRIMARY KEY USING INDEX webhook_events_until_pkey;
  ALTER INDEX webhook_events_by_time RENAME TO webhook_events_until_by_time;
  EXECUTE format('ALTER TABLE webhook_events RENAME TO %I', 'webhook_events_until_' || day);
  CREATE TABLE webhook_events (
    event_id    text        NOT NULL,
    type        text        NOT NULL,
    created_at  timestamptz NOT NULL,
    payload     text        NOT NULL,
    PRIMARY KEY (event_id, created_at)
  ) PARTITION BY RANGE (created_at);
  CREATE INDEX webhook_events_by_time ON webhook_events (created_at);
  EXECUTE format('ALTER TABLE webhook_events ATTACH PARTITION %I FOR VALUES FROM (MINVALUE) TO (%L)', 'webhook_events_until_' || day, until);
  EXECUTE format('ALTER TABLE %I DROP CONSTRAINT webhook_events_before_cutover', 'webhook_events_until_' || day);
  CREATE TABLE webhook_events_default PARTITION OF webhook_events DEFAULT;

  -- Deliveries, by their event's created_at (created_at here too), so an event and its deliveries share a partition.
  next_id := coalesce(pg_sequence_last_value(pg_get_serial_sequence('webhook_deliveries', 'delivery_id')), 0) + 1;
  ALTER TABLE webhook_deliveries ALTER COLUMN delivery_id DROP IDENTITY;
  ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_pkey,
    ADD CONSTRAINT webhook_deliveries_until_pkey PRIMARY KEY USING INDEX webhook_deliveries_until_pkey;
  ALTER INDEX webhook_deliveries_due RENAME TO webhook_deliveries_until_due;
  ALTER INDEX webhook_deliveries_by_endpoint RENAME TO webhook_deliveries_until_by_endpoint;
  ALTER INDEX webhook_deliveries_by_event RENAME TO webhook_deliveries_until_by_event;
  EXECUTE format('ALTER TABLE webhook_deliveries RENAME TO %I', 'webhook_deliveries_until_' || day);
  CREATE TABLE webhook_deliveries (
    delivery_id      bigint      GENERATED ALWAYS AS IDENTITY,
    event_id         text        NOT NULL,
    endpoint_id      text        NOT NULL REFERENCES webhook_endpoints (endpoint_id) ON DELETE CASCADE,
    state            text        NOT NULL DEFAULT 'pending'
                                 CONSTRAINT webhook_deliveries_state_check CHECK (state IN ('pending', 'succeeded', 'failed')),
    attempts         integer     NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL,
    lease_owner      text,
    lease_until      timestamptz,
    created_at       timestamptz NOT NULL,
    PRIMARY KEY (delivery_id, created_at)
  ) PARTITION BY RANGE (created_at);
  CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
  CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, delivery_id);
  CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (event_id);
  EXECUTE format('ALTER TABLE webhook_deliveries ALTER COLUMN delivery_id RESTART WITH %s', next_id);
  EXECUTE format('ALTER TABLE webhook_deliveries ATTACH PARTITION %I FOR VALUES FROM (MINVALUE) TO (%L)', 'webhook_deliveries_until_' || day, until);
  EXECUTE format('ALTER TABLE %I DROP CONSTRAINT webhook_deliveries_before_cutover', 'webhook_deliveries_until_' || day);
  CREATE TABLE webhook_deliveries_default PARTITION OF webhook_deliveries DEFAULT;

  -- Attempts, by attempted_at.
  next_id := coalesce(pg_sequence_last_value(pg_get_serial_sequence('webhook_attempts', 'attempt_id')), 0) + 1;
  ALTER TABLE webhook_attempts ALTER COLUMN attempt_id DROP IDENTITY;
  ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_pkey,
    ADD CONSTRAINT webhook_attempts_until_pkey PRIMARY KEY USING INDEX webhook_attempts_until_pkey;
  ALTER INDEX webhook_attempts_by_endpoint RENAME TO webhook_attempts_until_by_endpoint;
  ALTER INDEX webhook_attempts_by_delivery RENAME TO webhook_attempts_until_by_delivery;
  EXECUTE format('ALTER TABLE webhook_attempts RENAME TO %I', 'webhook_attempts_until_' || day);
  CREATE TABLE webhook_attempts (
    attempt_id     bigint      GENERATED ALWAYS AS IDENTITY,
    delivery_id    bigint      NOT NULL,
    endpoint_id    text        NOT NULL,
    event_id       text        NOT NULL,
    attempted_at   timestamptz NOT NULL,
    status         integer,
    latency_ms     integer     NOT NULL,
    response       text,
    error          text,
    PRIMARY KEY (attempt_id, attempted_at)
  ) PARTITION BY RANGE (attempted_at);
  CREATE INDEX webhook_attempts_by_endpoint ON webhook_attempts (endpoint_id, attempt_id);
  CREATE INDEX webhook_attempts_by_delivery ON webhook_attempts (delivery_id);
  EXECUTE format('ALTER TABLE webhook_attempts ALTER COLUMN attempt_id RESTART WITH %s', next_id);
  EXECUTE format('ALTER TABLE webhook_attempts ATTACH PARTITION %I FOR VALUES FROM (MINVALUE) TO (%L)', 'webhook_attempts_until_' || day, until);
  EXECUTE format('ALTER TABLE %I DROP CONSTRAINT webhook_attempts_before_cutover', 'webhook_attempts_until_' || day);
  CREATE TABLE webhook_attempts_default PARTITION OF webhook_attempts DEFAULT;

  DROP TABLE partitioning_cutover;
END $$;
