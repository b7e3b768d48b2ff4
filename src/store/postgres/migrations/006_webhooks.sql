-- Webhooks (issue 15): endpoints, the outbox of events written beside each audited change, and their deliveries.
-- event_types: the event types sent, NULL for every type. secret: whsec_..., kept so deliveries can be signed.
CREATE TABLE webhook_endpoints (
  endpoint_id      text        PRIMARY KEY,
  url              text        NOT NULL,
  description      text,
  event_types      text[],
  secret           text        NOT NULL,
  created_at       timestamptz NOT NULL,
  disabled_at      timestamptz,
  disabled_reason  text,
  -- The first failure of the current run of failures; NULL after a success.
  failing_since    timestamptz
);

-- The outbox: one row per audited change, written in the change's transaction. payload is the JSON body sent, as sent
-- (text, not jsonb: the signature covers these exact bytes).
CREATE TABLE webhook_events (
  event_id    text        PRIMARY KEY,
  type        text        NOT NULL,
  created_at  timestamptz NOT NULL,
  payload     text        NOT NULL
);
CREATE INDEX webhook_events_by_time ON webhook_events (created_at);

-- One event to one endpoint: pending until delivered (succeeded) or given up on (failed). Claimed with FOR UPDATE SKIP
-- LOCKED, then leased (lease_owner, lease_until): nobody else takes it before lease_until.
CREATE TABLE webhook_deliveries (
  delivery_id      bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_id         text        NOT NULL REFERENCES webhook_events (event_id) ON DELETE CASCADE,
  endpoint_id      text        NOT NULL REFERENCES webhook_endpoints (endpoint_id) ON DELETE CASCADE,
  state            text        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'succeeded', 'failed')),
  attempts         integer     NOT NULL DEFAULT 0,
  next_attempt_at  timestamptz NOT NULL,
  lease_owner      text,
  lease_until      timestamptz,
  created_at       timestamptz NOT NULL
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (endpoint_id, delivery_id);
CREATE INDEX webhook_deliveries_by_event ON webhook_deliveries (event_id);

-- Every attempt: its answer's status (NULL: none came), how long it took, and the answer's first bytes or the error.
CREATE TABLE webhook_attempts (
  attempt_id     bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  delivery_id    bigint      NOT NULL REFERENCES webhook_deliveries (delivery_id) ON DELETE CASCADE,
  endpoint_id    text        NOT NULL,
  event_id       text        NOT NULL,
  attempted_at   timestamptz NOT NULL,
  status         integer,
  latency_ms     integer     NOT NULL,
  response       text,
  error          text
);
CREATE INDEX webhook_attempts_by_endpoint ON webhook_attempts (endpoint_id, attempt_id);
CREATE INDEX webhook_attempts_by_delivery ON webhook_attempts (delivery_id);
