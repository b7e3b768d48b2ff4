// Test support for the credential cache across instances: warming an instance's cache, and reading its very next answer.
import assert from 'node:assert/strict';
import { call, failureMessage, type CallResult } from './http.ts';
import type { Account, ServerProcess } from './server-process.ts';

/** Several answered requests: from the second on, the key is vouched for and its credential served from the instance's cache. */
export async function warm(instance: ServerProcess, account: Account): Promise<void> {
  for (let i = 0; i < 4; i++) {
    const result = await call('GET', `${instance.api}/user`, { auth: account });
    assert.equal(result.status, 200, `warming: ${result.text}`);
  }
}

export function refusedWith(result: CallResult, status: number, code: string, what: string): void {
  assert.equal(result.status, status, `${what}: the very next request on the warmed instance was answered ${result.status} ${result.text}`);
  assert.equal(failureMessage(result).code, code, what);
}
