-- Webhooks (issue 15): endpoints, the outbox of events written beside each audited change, and their deliveries.
-- event_types: a JSON array of event types, NULL for every type. secret: whsec_..., kept so deliveries can be signed.
CREATE TABLE webhook_endpoints (
  endpoint_id      TEXT    PRIMARY KEY,
  url              TEXT    NOT NULL,
  description      TEXT,
  event_types      TEXT,
  secret           TEXT    NOT NULL,
  created_at       TEXT    NOT NULL,
  disabled_at      TEXT,
  disabled_reason  TEXT,
  -- The first failure of the current run of failures; NULL after a success.
  failing_since    TEXT
);

-- The outbox: one row per audited change, written in the change's transaction. payload is the JSON body sent, as sent.
CREATE TABLE webhook_events (
  event_id    TEXT PRIMARY KEY,
  type        TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  payload     TEXT NOT NULL
);
CREATE INDEX webhook_events_by_time ON webhook_events (created_at);

-- One event to one endpoint: pending until delivered (succeeded) or given up on (failed). A worker claims a pending row by
-- setting lease_owner and lease_until; nobody else takes it before lease_until.
CREATE TABLE webhook_deliveries (
  delivery_id      INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id         TEXT    NOT NULL REFERENCES webhook_events (event_id) ON DELETE CASCADE,
  endpoint_id      TEXT    NOT NULL REFERENCES webhook_endpoints (endpoint_id) ON DELETE CASCADE,
  state            TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'succeeded', 'failed')),
  attempts         INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  TEXT    NOT NULL,
  lease_owner      TEXT,
  lease_until      TEXT,
  created_at       TEXT    NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, delivery_id);
CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (event_id);

-- Every attempt: its answer's status (NULL: none came), how long it took, and the answer's first bytes or the error.
CREATE TABLE webhook_attempts (
  attempt_id     INTEGER PRIMARY KEY AUTOINCREMENT,
  delivery_id    INTEGER NOT NULL REFERENCES webhook_deliveries (delivery_id) ON DELETE CASCADE,
  endpoint_id    TEXT    NOT NULL,
  event_id       TEXT    NOT NULL,
  attempted_at   TEXT    NOT NULL,
  status         INTEGER,
  latency_ms     INTEGER NOT NULL,
  response       TEXT,
  error          TEXT
);
CREATE INDEX webhook_attempts_by_endpoint ON webhook_attempts (endpoint_id, attempt_id);
CREATE INDEX webhook_attempts_by_delivery ON webhook_attempts (delivery_id);
