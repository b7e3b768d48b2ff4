// Test support for usage per key: requests of known outcomes sent with a key, and the usage endpoint read until it adds up.
import assert from 'node:assert/strict';
import { composeKey, parseKey, randomBase62 } from '../../../src/domain/api-keys.ts';
import { eventually } from '../../support/eventually.ts';
import { call, type CallResult } from '../../support/http.ts';

export type Figures = { success: number; client_error: number; rate_limited: number; refused: number; server_error: number };

export const NONE: Figures = { success: 0, client_error: 0, rate_limited: 0, refused: 0, server_error: 0 };

export interface Caller {
  readonly username: string;
  readonly key: string;
}

/** `times` calls of one kind, one after another (so a budget is spent in order), each answered `status`. */
export async function send(api: string, caller: Caller, kind: 'user' | 'bad-timezone' | 'hello', times: number, status: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    const auth = { username: caller.username, key: caller.key };
    let result: CallResult;
    if (kind === 'user') result = await call('GET', `${api}/user`, { auth });
    else if (kind === 'hello') result = await call('GET', `${api}/hello`, { auth });
    else result = await call('POST', `${api}/settings`, { auth, form: { timezone: 'Mars/Olympus_Mons' } });
    assert.equal(result.status, status, `${kind} #${i + 1} with ${caller.username}'s key: ${result.text}`);
  }
}

/** The outcome an answer counts as, from its status, as docs/api.md (Usage per key) defines them (not the server's own mapping). */
export function outcomeOf(status: number): keyof Figures {
  if (status >= 200 && status < 400) return 'success';
  if (status === 429) return 'rate_limited';
  if (status === 401 || status === 403) return 'refused';
  if (status >= 400 && status < 500) return 'client_error';
  if (status >= 500) return 'server_error';
  throw new Error(`no outcome for status ${status}`);
}

/**
 * `times` GET /user with the caller's key, one after another, each on a new connection (so `serve --workers` hands them to its
 * workers in turn), each answered one of `allowed`: the figures as the client saw them, for when which answers are 429 depends
 * on which process got the connection.
 */
export async function sendSeeing(api: string, caller: Caller, times: number, allowed: readonly number[]): Promise<Figures> {
  const seen = { ...NONE };
  for (let i = 0; i < times; i++) {
    const result = await call('GET', `${api}/user`, { auth: { username: caller.username, key: caller.key }, headers: { connection: 'close' } });
    assert.ok(allowed.includes(result.status), `user #${i + 1} with ${caller.username}'s key: ${result.status} is none of ${allowed.join(', ')}: ${result.text}`);
    seen[outcomeOf(result.status)]++;
  }
  return seen;
}

/** The caller's key id with another secret (its checksum right): what a guesser who read the key id could send. */
export function forgedKeyOf(key: string): string {
  const parsed = parseKey(key);
  assert.ok(parsed.ok, 'not a key');
  return composeKey('live', parsed.key.keyId, randomBase62(32)).token;
}

/** Every day's figures added up. */
export function totalOf(days: readonly (Figures & { day: string })[]): Figures {
  const total = { ...NONE };
  for (const day of days) for (const outcome of Object.keys(NONE) as (keyof Figures)[]) total[outcome] += day[outcome];
  return total;
}

/** Reads the usage (through `read`, answering the envelope's data) until its totals are `expected` (flushes are in the background). */
export async function usageAddingUpTo(what: string, read: () => Promise<any>, expected: Figures): Promise<any> {
  const usage = await eventually(what, read, (data) => JSON.stringify(totalOf(data.days)) === JSON.stringify(expected));
  // Every day named is one this test ran on (UTC), so the figures are per day as much as in total.
  const today = new Date().toISOString().slice(0, 10);
  for (const day of usage.days) assert.ok(day.day <= today && day.day >= new Date(Date.now() - 86_400_000).toISOString().slice(0, 10), `unexpected day ${day.day}`);
  return usage;
}
