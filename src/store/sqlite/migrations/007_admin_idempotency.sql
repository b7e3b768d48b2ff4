-- Idempotency-Key on the admin API (issue 26): the admin port's keys, per admin token, in a table of their own so that no
-- public caller can ever meet an admin key (or an admin caller an account's). The same columns and rules as idempotency_keys.
CREATE TABLE admin_idempotency_keys (
  token_id      TEXT    NOT NULL REFERENCES admin_tokens (token_id) ON DELETE CASCADE,
  key           TEXT    NOT NULL,
  fingerprint   TEXT    NOT NULL,
  token         TEXT    NOT NULL,
  locked_until  INTEGER NOT NULL,
  expires_at    INTEGER NOT NULL,
  status        INTEGER,
  headers       TEXT,
  body          BLOB,
  PRIMARY KEY (token_id, key)
);

CREATE INDEX admin_idempotency_keys_by_expiry ON admin_idempotency_keys (expires_at);
