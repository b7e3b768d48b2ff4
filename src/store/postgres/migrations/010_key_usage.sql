-- Usage per key (issue 30): requests per key, UTC day and outcome, added to by every instance's flush (INSERT ... ON CONFLICT
-- DO UPDATE SET count = count + EXCLUDED.count); and the key's last addresses. Deleted with the key; days past
-- KEY_USAGE_RETENTION_DAYS are pruned by day.
CREATE TABLE key_usage (
  key_id   text   NOT NULL REFERENCES api_keys (key_id) ON DELETE CASCADE,
  day      date   NOT NULL,
  outcome  text   NOT NULL CHECK (outcome IN ('success', 'client_error', 'rate_limited', 'refused', 'server_error')),
  count    bigint NOT NULL,
  PRIMARY KEY (key_id, day, outcome)
);

CREATE INDEX key_usage_by_day ON key_usage (day);

CREATE TABLE key_usage_addresses (
  key_id     text        NOT NULL REFERENCES api_keys (key_id) ON DELETE CASCADE,
  address    text        NOT NULL,
  last_seen  timestamptz NOT NULL,
  PRIMARY KEY (key_id, address)
);

CREATE INDEX key_usage_addresses_by_time ON key_usage_addresses (last_seen);
