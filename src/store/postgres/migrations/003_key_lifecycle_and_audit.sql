-- Key scopes, expiry and rolls, and the audit trail of every change to an account or a key (issue 14).
-- scope: 'write' allows every endpoint, 'read' only GET. expires_at: NULL never expires. rolled_into: the successor's key id.
ALTER TABLE api_keys ADD COLUMN scope text NOT NULL DEFAULT 'write' CHECK (scope IN ('read', 'write'));
ALTER TABLE api_keys ADD COLUMN expires_at timestamptz;
ALTER TABLE api_keys ADD COLUMN rolled_into text;

-- No foreign key to accounts: the trail of a deleted account outlives it. changes is {field: {old, new}}.
CREATE TABLE audit_events (
  id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  occurred_at  timestamptz NOT NULL,
  actor        text        NOT NULL,
  action       text        NOT NULL,
  account_id   bigint,
  username     text,
  changes      jsonb       NOT NULL DEFAULT '{}',
  request_id   text,
  address      text
);

CREATE INDEX audit_events_by_time ON audit_events (occurred_at);
CREATE INDEX audit_events_by_username ON audit_events (lower(username), occurred_at);
