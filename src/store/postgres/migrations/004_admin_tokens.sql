-- Tokens for the admin API (ADMIN_PORT). Like api_keys: only a SHA-256 of each is kept; token_id is the non-secret part
-- used to list and revoke it. Not tied to an account: an admin token acts on every account.
CREATE TABLE admin_tokens (
  token_id        text        PRIMARY KEY,
  secret_hash     bytea       NOT NULL,
  display_prefix  text        NOT NULL,
  label           text        NOT NULL,
  created_by      text        NOT NULL,
  created_at      timestamptz NOT NULL,
  last_used_at    timestamptz,
  revoked_at      timestamptz
);
