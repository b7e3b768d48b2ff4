-- Accounts and their API keys. user_id never repeats (an identity column is a sequence, never rewound); usernames are unique ignoring case.
CREATE TABLE accounts (
  id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  username    text        NOT NULL,
  name        text        NOT NULL,
  timezone    text        NOT NULL DEFAULT 'UTC',
  premium     boolean     NOT NULL DEFAULT false,
  created_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL
);

-- Usernames are ASCII, so lower() folds exactly what SQLite's NOCASE folds; lookups compare lower() to use this index.
CREATE UNIQUE INDEX accounts_username_unique ON accounts (lower(username));

-- Only a SHA-256 of each key is kept; key_id is the non-secret part used to find and revoke it.
CREATE TABLE api_keys (
  key_id          text        PRIMARY KEY,
  account_id      bigint      NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
  secret_hash     bytea       NOT NULL,
  display_prefix  text        NOT NULL,
  label           text,
  created_at      timestamptz NOT NULL,
  last_used_at    timestamptz,
  revoked_at      timestamptz
);

CREATE INDEX api_keys_by_account ON api_keys (account_id);
