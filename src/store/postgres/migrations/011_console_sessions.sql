-- The operator console's sessions (issue 30): only a SHA-256 of each cookie's secret is kept. A session belongs to the admin
-- token it was signed in with, and goes with it; revoking the token deletes its sessions too (admin-tokens/postgres.ts).
-- Past their idle or absolute lifetime they are pruned.
CREATE TABLE console_sessions (
  session_hash  bytea       PRIMARY KEY CHECK (octet_length(session_hash) = 32),
  token_id      text        NOT NULL REFERENCES admin_tokens (token_id) ON DELETE CASCADE,
  created_at    timestamptz NOT NULL,
  last_seen_at  timestamptz NOT NULL
);

-- The prune deletes by either lifetime, each with its own index; the token's index serves revocation and the cascade.
CREATE INDEX console_sessions_by_creation ON console_sessions (created_at);
CREATE INDEX console_sessions_by_last_seen ON console_sessions (last_seen_at);
CREATE INDEX console_sessions_by_token ON console_sessions (token_id);
