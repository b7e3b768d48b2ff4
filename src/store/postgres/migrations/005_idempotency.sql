-- Idempotency keys of POST /user and POST /settings, per account: claimed while the request runs (token, locked_until), then
-- holding the answer to replay (status, headers, body) until expires_at, after which the key is free and pruning deletes it.
-- Times are the database's (now()), so instances with skewed clocks agree.
CREATE TABLE idempotency_keys (
  account_id    bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  key           text        NOT NULL,
  fingerprint   text        NOT NULL,
  token         text        NOT NULL,
  locked_until  timestamptz NOT NULL,
  expires_at    timestamptz NOT NULL,
  status        integer,
  headers       jsonb,
  body          bytea,
  PRIMARY KEY (account_id, key)
);

CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);
