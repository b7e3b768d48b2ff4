-- Idempotency-Key on the admin API (issue 26): the admin port's keys, per admin token, in a table of their own so that no
-- public caller can ever meet an admin key (or an admin caller an account's). The same columns and rules as idempotency_keys.
CREATE TABLE admin_idempotency_keys (
  token_id      text        NOT NULL REFERENCES admin_tokens (token_id) ON DELETE CASCADE,
  key           text        NOT NULL,
  fingerprint   text        NOT NULL,
  token         text        NOT NULL,
  locked_until  timestamptz NOT NULL,
  expires_at    timestamptz NOT NULL,
  status        integer,
  headers       jsonb,
  body          bytea,
  PRIMARY KEY (token_id, key)
);

CREATE INDEX admin_idempotency_keys_by_expiry ON admin_idempotency_keys (expires_at);
