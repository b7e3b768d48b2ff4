// The store contract: what every engine must do, run as one suite against SQLite and PostgreSQL alike; one cases file per
// concern of src/store (test/unit/contract-cases.test.ts checks none is missing), then the cases that cross concerns.
import { defineAccountCases } from './account-cases.ts';
import { defineAdminTokenCases } from './admin-token-cases.ts';
import { defineAuditCases } from './audit-cases.ts';
import { defineConcurrencyCases } from './concurrency-cases.ts';
import { defineConsoleSessionCases } from './console-session-cases.ts';
import { defineCredentialCases } from './credential-cases.ts';
import { defineIdempotencyCases } from './idempotency-cases.ts';
import { defineKeyCases } from './key-cases.ts';
import { defineKeyRollCases } from './key-roll-cases.ts';
import { defineKeyUsageCases } from './key-usage-cases.ts';
import { defineSchemaCases } from './schema-cases.ts';
import { defineWebhookCases } from './webhook-cases.ts';
import type { MakeStore } from './contract-support.ts';

export type { MakeStore, StoreUnderTest } from './contract-support.ts';

const concerns = [
  defineSchemaCases,
  defineAccountCases,
  defineKeyCases,
  defineKeyRollCases,
  defineCredentialCases,
  defineAuditCases,
  defineIdempotencyCases,
  defineAdminTokenCases,
  defineWebhookCases,
  defineKeyUsageCases,
  defineConsoleSessionCases,
  // Across concerns: writers racing each other through one store and through two.
  defineConcurrencyCases,
];

export function defineStoreContract(engineName: string, makeStore: MakeStore, skip?: string): void {
  for (const define of concerns) define(engineName, makeStore, skip);
}
