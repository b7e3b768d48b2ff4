-- Accounts and their API keys. user_id never repeats (AUTOINCREMENT); usernames are unique ignoring case.
CREATE TABLE accounts (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  username    TEXT    NOT NULL COLLATE NOCASE UNIQUE,
  name        TEXT    NOT NULL,
  timezone    TEXT    NOT NULL DEFAULT 'UTC',
  premium     INTEGER NOT NULL DEFAULT 0 CHECK (premium IN (0, 1)),
  created_at  TEXT    NOT NULL,
  updated_at  TEXT    NOT NULL
);

-- Only a SHA-256 of each key is kept; key_id is the non-secret part used to find and revoke it.
CREATE TABLE api_keys (
  key_id          TEXT    PRIMARY KEY,
  account_id      INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  secret_hash     BLOB    NOT NULL,
  display_prefix  TEXT    NOT NULL,
  label           TEXT,
  created_at      TEXT    NOT NULL,
  last_used_at    TEXT,
  revoked_at      TEXT
);

CREATE INDEX api_keys_by_account ON api_keys (account_id);
