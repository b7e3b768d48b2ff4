// Checks that a response is a documented answer: an allowed status, the envelope, and a `code` docs/api.md lists for that status.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/server-process.ts';

/** Status -> the codes docs/api.md's "Every code" table allows for it. */
export function documentedCodes(): Map<number, Set<string>> {
  const docs = readFileSync(join(REPO_ROOT, 'docs/api.md'), 'utf8');
  // The public API's table only: the section ends at the next heading (the admin API's codes follow in a section of their own).
  const section = docs.slice(docs.indexOf('## Every code'));
  const end = section.indexOf('\n## ', 1);
  const table = end === -1 ? section : section.slice(0, end);
  const codes = new Map<number, Set<string>>();
  for (const row of table.matchAll(/^\| (\d{3}) \| (.*) \|$/gm)) {
    codes.set(Number(row[1]), new Set([...row[2]!.matchAll(/`([a-z_]+)`/g)].map((match) => match[1]!)));
  }
  return codes;
}

export interface Answer {
  readonly method: string;
  readonly status: number;
  readonly contentType: string | undefined;
  readonly body: string;
}

/** Undefined when the answer is documented; otherwise what is wrong with it. */
export function problemWith(answer: Answer, codes: Map<number, Set<string>>): string | undefined {
  const bodiless = answer.method === 'HEAD' || answer.status === 304 || answer.status === 204;
  // 503 (an engine, overload) and 501 (a transfer coding this server does not implement) are answers; any other 5xx a bug.
  if (answer.status >= 500 && answer.status !== 503 && answer.status !== 501) return `a ${answer.status}`;
  if (answer.status !== 200 && answer.status !== 204 && answer.status !== 304 && !codes.has(answer.status)) {
    return `undocumented status ${answer.status}`;
  }
  if (bodiless) return answer.body === '' ? undefined : `a body on a ${answer.method} ${answer.status}`;
  if (!answer.contentType?.startsWith('application/json')) return `content-type ${answer.contentType}`;
  let envelope: { status?: unknown; messages?: unknown; meta?: unknown; data?: unknown };
  try {
    envelope = JSON.parse(answer.body);
  } catch {
    return 'a body that is not JSON';
  }
  const keys = Object.keys(envelope).sort().join(',');
  if (keys !== 'data,messages,meta,status') return `envelope keys ${keys}`;
  if (answer.status < 400) {
    if (envelope.status !== 'success' || !Array.isArray(envelope.messages) || envelope.messages.length !== 0) return 'a bad success envelope';
    return undefined;
  }
  const expected = answer.status >= 500 ? 'error' : 'fail';
  if (envelope.status !== expected || envelope.data !== null || JSON.stringify(envelope.meta) !== '{}') return 'a bad failure envelope';
  if (!Array.isArray(envelope.messages) || envelope.messages.length === 0) return 'a failure without messages';
  for (const message of envelope.messages as { code?: unknown; message?: unknown }[]) {
    if (typeof message.code !== 'string' || !codes.get(answer.status)?.has(message.code)) {
      return `code ${String(message.code)} is not documented for ${answer.status}`;
    }
    if (typeof message.message !== 'string' || message.message.length === 0) return 'a message without a sentence';
  }
  return undefined;
}
