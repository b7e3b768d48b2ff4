-- Tokens for the admin API (ADMIN_PORT). Like api_keys: only a SHA-256 of each is kept; token_id is the non-secret part
-- used to list and revoke it. Not tied to an account: an admin token acts on every account.
CREATE TABLE admin_tokens (
  token_id        TEXT    PRIMARY KEY,
  secret_hash     BLOB    NOT NULL,
  display_prefix  TEXT    NOT NULL,
  label           TEXT    NOT NULL,
  created_by      TEXT    NOT NULL,
  created_at      TEXT    NOT NULL,
  last_used_at    TEXT,
  revoked_at      TEXT
);
