-- Idempotency keys of POST /user and POST /settings, per account: claimed while the request runs (token, locked_until), then
-- holding the answer to replay (status, headers, body) until expires_at, after which the key is free and pruning deletes it.
-- Times are milliseconds since the epoch, compared in SQL.
CREATE TABLE idempotency_keys (
  account_id    INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  key           TEXT    NOT NULL,
  fingerprint   TEXT    NOT NULL,
  token         TEXT    NOT NULL,
  locked_until  INTEGER NOT NULL,
  expires_at    INTEGER NOT NULL,
  status        INTEGER,
  headers       TEXT,
  body          BLOB,
  PRIMARY KEY (account_id, key)
);

CREATE INDEX idempotency_keys_by_expiry ON idempotency_keys (expires_at);
