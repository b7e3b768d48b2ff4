// What the Express and the plain Fastify peers share, so the two differ only in their framework: the command line, the
// SQLite queries, the Basic check (one query per request, the key's hash compared with each of the user's keys), and the
// answers' bodies and fixed headers.
import { createHash, timingSafeEqual } from 'node:crypto';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import timezoneData from '../src/domain/timezones.json' with { type: 'json' };
import type { CallId } from './calls.ts';
import { loadTemplates, typicalHeaders } from './header-templates.ts';

export interface User {
  id: number;
  username: string;
  name: string;
  timezone: string;
  premium: boolean;
}

/** `--database PATH [--port N] [--host H] [--headers FILE]`; exits 2 with the usage line without a database. */
export function peerFlags(script: string, defaultPort: string) {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: defaultPort },
      host: { type: 'string', default: '127.0.0.1' },
      database: { type: 'string' },
      headers: { type: 'string' },
    },
  });
  if (values.database === undefined) {
    process.stderr.write(`usage: node bench/${script} --database PATH [--port N] [--host H] [--headers FILE]\n`);
    process.exit(2);
  }
  return { ...values, database: values.database };
}

/** The service's schema with the service's default durability (WAL, synchronous=FULL), and the three statements the peers run. */
export function openPeerDatabase(path: string) {
  const db = new DatabaseSync(path, { timeout: 5000 });
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = FULL');
  const findKeys = db.prepare(
    `SELECT a.id, a.username, a.name, a.timezone, a.premium, k.secret_hash
     FROM accounts a JOIN api_keys k ON k.account_id = a.id
     WHERE a.username = ? AND k.revoked_at IS NULL`,
  );
  return {
    db,
    updateName: db.prepare('UPDATE accounts SET name = ?, updated_at = ? WHERE id = ? RETURNING id, username, name, timezone'),
    updateTimezone: db.prepare('UPDATE accounts SET timezone = ?, updated_at = ? WHERE id = ? RETURNING timezone'),
    /** The user whose key the Basic header carries; null when it carries none that is right. */
    userFromBasic(header: string): User | null {
      const [scheme, encoded] = header.split(' ');
      const decoded = scheme === 'Basic' && encoded !== undefined ? Buffer.from(encoded, 'base64').toString('utf8') : '';
      const colon = decoded.indexOf(':');
      const hash = createHash('sha256').update(decoded.slice(colon + 1)).digest();
      const rows = colon === -1 ? [] : findKeys.all(decoded.slice(0, colon));
      const row = rows.find((candidate) => {
        const stored = candidate.secret_hash as Uint8Array;
        return stored.length === hash.length && timingSafeEqual(stored, hash);
      });
      if (row === undefined) return null;
      return { id: Number(row.id), username: String(row.username), name: String(row.name), timezone: String(row.timezone), premium: row.premium === 1 };
    },
  };
}

/** The fixed response headers of each call, as captured from the service (bench/run.ts), those a typical app would send. */
export function peerHeaders(file: string | undefined): Record<CallId, Record<string, string>> {
  const templates = loadTemplates(file);
  return Object.fromEntries(Object.entries(templates).map(([id, template]) => [id, typicalHeaders(template)])) as Record<CallId, Record<string, string>>;
}

export const zones = new Set<string>(timezoneData.zones);
export const timezonesBody = JSON.stringify({
  status: 'success',
  messages: [],
  meta: { description: 'Data is a list of valid timezones.' },
  data: timezoneData.zones,
});
export const timezonesEtag = `"tz-${timezoneData.tzdata}-${createHash('sha256').update(timezonesBody).digest('base64url').slice(0, 16)}"`;

export const success = (data: unknown) => ({ status: 'success', messages: [], meta: {}, data });
export const failure = (code: string) => ({ status: 'fail', messages: [{ code, message: code }], meta: {}, data: null });

export const userView = (user: Record<string, unknown> | User) => ({
  user_id: Number(user.id),
  username: String(user.username),
  name: String(user.name),
  timezone: String(user.timezone),
});

const CONTROL_CHARACTER = /[\p{Cc}\u2028\u2029]/u;
export function validName(name: unknown): name is string {
  return typeof name === 'string' && [...name].length >= 1 && [...name].length <= 100 && !CONTROL_CHARACTER.test(name) && name.trim() !== '';
}
