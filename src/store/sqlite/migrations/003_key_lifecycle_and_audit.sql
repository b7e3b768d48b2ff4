-- Key scopes, expiry and rolls, and the audit trail of every change to an account or a key (issue 14).
-- scope: 'write' allows every endpoint, 'read' only GET. expires_at: NULL never expires. rolled_into: the successor's key id.
ALTER TABLE api_keys ADD COLUMN scope TEXT NOT NULL DEFAULT 'write' CHECK (scope IN ('read', 'write'));
ALTER TABLE api_keys ADD COLUMN expires_at TEXT;
ALTER TABLE api_keys ADD COLUMN rolled_into TEXT;

-- No foreign key to accounts: the trail of a deleted account outlives it. changes is a JSON object {field: {old, new}}.
CREATE TABLE audit_events (
  id           INTEGER PRIMARY KEY AUTOINCREMENT,
  occurred_at  TEXT    NOT NULL,
  actor        TEXT    NOT NULL,
  action       TEXT    NOT NULL,
  account_id   INTEGER,
  username     TEXT    COLLATE NOCASE,
  changes      TEXT    NOT NULL DEFAULT '{}',
  request_id   TEXT,
  address      TEXT
);

CREATE INDEX audit_events_by_time ON audit_events (occurred_at);
CREATE INDEX audit_events_by_username ON audit_events (username, occurred_at);
