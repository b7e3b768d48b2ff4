// The client's ServerErrorCode union and docs/api.md's "Every code" table name the same codes.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import type { ServerErrorCode } from '../../client/src/index.ts';
import { REPO_ROOT } from '../support/server-process.ts';

// Record<ServerErrorCode, ...> makes the compiler check this list both ways: a missing code or an extra key is an error.
const CLIENT_CODES: Record<ServerErrorCode, true> = {
  missing_parameter: true,
  unknown_parameter: true,
  duplicate_parameter: true,
  invalid_parameter: true,
  too_many_parameters: true,
  parameter_too_long: true,
  malformed_body: true,
  malformed_url: true,
  invalid_name: true,
  invalid_timezone: true,
  malformed_request: true,
  duplicate_header: true,
  bad_request: true,
  invalid_idempotency_key: true,
  idempotency_key_in_use: true,
  precondition_failed: true,
  idempotency_key_reused: true,
  credentials_required: true,
  malformed_credentials: true,
  malformed_key: true,
  invalid_credentials: true,
  key_revoked: true,
  key_expired: true,
  wrong_environment: true,
  wrong_credential_kind: true,
  metrics_token_required: true,
  premium_required: true,
  insufficient_scope: true,
  not_found: true,
  account_not_found: true,
  method_not_allowed: true,
  request_timeout: true,
  body_too_large: true,
  unsupported_media_type: true,
  expectation_failed: true,
  rate_limited: true,
  too_many_failed_attempts: true,
  headers_too_large: true,
  internal_error: true,
  unsupported_transfer_coding: true,
  store_unavailable: true,
  store_busy: true,
  rate_limiter_unavailable: true,
  not_ready: true,
  overloaded: true,
  shutting_down: true,
};

function documentedCodes(): string[] {
  const docs = readFileSync(join(REPO_ROOT, 'docs/api.md'), 'utf8');
  const section = /^## Every code\n([\s\S]*?)(?=^## )/m.exec(docs)?.[1];
  assert.ok(section, 'docs/api.md should have an "## Every code" section');
  const rows = section.split('\n').filter((line) => /^\|\s*\d{3}\s*\|/.test(line));
  assert.ok(rows.length >= 10, `expected a row per status in "Every code", found ${rows.length}`);
  return rows.flatMap((row) => [...row.matchAll(/`([a-z]+(?:_[a-z]+)*)`/g)].map((match) => match[1]!));
}

test('ServerErrorCode lists exactly the codes of docs/api.md "Every code"', () => {
  const documented = [...new Set(documentedCodes())].sort();
  const client = Object.keys(CLIENT_CODES).sort();
  assert.deepEqual(
    client,
    documented,
    `client/src/error-codes.ts and docs/api.md disagree: missing in the client: ${documented.filter((code) => !client.includes(code)).join(', ') || 'none'}; ` +
      `not documented: ${client.filter((code) => !documented.includes(code)).join(', ') || 'none'}`,
  );
});
