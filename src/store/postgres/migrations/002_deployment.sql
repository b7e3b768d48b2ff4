-- Which environment this database belongs to, so live account-api and the sandbox each refuse the other's database whatever URL
-- reaches it. At most one row (id 1); account-api's migrate fills it in once and never changes it (src/store/deployment.ts).
CREATE TABLE deployment (
  id           smallint    PRIMARY KEY CHECK (id = 1),
  environment  text        NOT NULL CHECK (environment IN ('live', 'sandbox')),
  decided_by   text        NOT NULL CHECK (decided_by IN ('api_keys', 'migrator', 'operator')),
  recorded_at  timestamptz NOT NULL
);
