// The plain Fastify peer: what a team would write with Fastify itself and nothing else. Basic auth checked with one SQLite
// query per request, no plugins, no schemas; the comparison users will make with the service, which is also Fastify.
//
//   node bench/fastify-peer.ts --database PATH [--port 8092] [--host 127.0.0.1] [--headers FILE]
//
// PATH is a database with the service's schema (accounts, api_keys holding SHA-256 hashes of the keys); the queries are the
// Express peer's, and writes use the service's default durability: WAL with synchronous=FULL. --headers: the fixed response
// headers captured from the service by bench/run.ts; like the Express peer it sends those a typical app would (security
// headers, Cache-Control, ETag), not the request id or rate-limit headers. Forms are read with URLSearchParams in a content
// type parser of Fastify's own API (@fastify/formbody would be a plugin).
import { createHash, timingSafeEqual } from 'node:crypto';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import timezoneData from '../src/domain/timezones.json' with { type: 'json' };
import type { CallId } from './calls.ts';
import { loadTemplates, typicalHeaders } from './header-templates.ts';

const { values: flags } = parseArgs({
  options: {
    port: { type: 'string', default: '8092' },
    host: { type: 'string', default: '127.0.0.1' },
    database: { type: 'string' },
    headers: { type: 'string' },
  },
});
if (flags.database === undefined) {
  process.stderr.write('usage: node bench/fastify-peer.ts --database PATH [--port N] [--host H] [--headers FILE]\n');
  process.exit(2);
}

interface User {
  id: number;
  username: string;
  name: string;
  timezone: string;
  premium: boolean;
}

const db = new DatabaseSync(flags.database, { timeout: 5000 });
db.exec('PRAGMA journal_mode = WAL');
db.exec('PRAGMA synchronous = FULL');
const findKeys = db.prepare(
  `SELECT a.id, a.username, a.name, a.timezone, a.premium, k.secret_hash
   FROM accounts a JOIN api_keys k ON k.account_id = a.id
   WHERE a.username = ? AND k.revoked_at IS NULL`,
);
const updateName = db.prepare('UPDATE accounts SET name = ?, updated_at = ? WHERE id = ? RETURNING id, username, name, timezone');
const updateTimezone = db.prepare('UPDATE accounts SET timezone = ?, updated_at = ? WHERE id = ? RETURNING timezone');

const templates = loadTemplates(flags.headers);
const headers = Object.fromEntries(Object.entries(templates).map(([id, template]) => [id, typicalHeaders(template)])) as Record<
  CallId,
  Record<string, string>
>;
const zones = new Set<string>(timezoneData.zones);
const timezonesBody = JSON.stringify({
  status: 'success',
  messages: [],
  meta: { description: 'Data is a list of valid timezones.' },
  data: timezoneData.zones,
});
const timezonesEtag = `"tz-${timezoneData.tzdata}-${createHash('sha256').update(timezonesBody).digest('base64url').slice(0, 16)}"`;

const success = (data: unknown) => ({ status: 'success', messages: [], meta: {}, data });
const failure = (code: string) => ({ status: 'fail', messages: [{ code, message: code }], meta: {}, data: null });
const CHALLENGE = { 'www-authenticate': 'Basic realm="account-api"' };

declare module 'fastify' {
  interface FastifyRequest {
    user: User | null;
  }
}

/** A preHandler: looks the username up and compares the key's hash with each of its keys. */
function authenticate(required: boolean) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers.authorization;
    if (header === undefined) {
      if (required) return reply.code(401).headers(CHALLENGE).send(failure('credentials_required'));
      return;
    }
    const [scheme, encoded] = header.split(' ');
    const decoded = scheme === 'Basic' && encoded !== undefined ? Buffer.from(encoded, 'base64').toString('utf8') : '';
    const colon = decoded.indexOf(':');
    const hash = createHash('sha256').update(decoded.slice(colon + 1)).digest();
    const rows = colon === -1 ? [] : findKeys.all(decoded.slice(0, colon));
    const row = rows.find((candidate) => {
      const stored = candidate.secret_hash as Uint8Array;
      return stored.length === hash.length && timingSafeEqual(stored, hash);
    });
    if (row === undefined) return reply.code(401).headers(CHALLENGE).send(failure('invalid_credentials'));
    const user: User = {
      id: Number(row.id),
      username: String(row.username),
      name: String(row.name),
      timezone: String(row.timezone),
      premium: row.premium === 1,
    };
    if (required && !user.premium) return reply.code(403).send(failure('premium_required'));
    request.user = user;
  };
}

const userView = (user: Record<string, unknown>) => ({
  user_id: Number(user.id),
  username: String(user.username),
  name: String(user.name),
  timezone: String(user.timezone),
});

const CONTROL_CHARACTER = /[\p{Cc}\u2028\u2029]/u;
function validName(name: unknown): name is string {
  return typeof name === 'string' && [...name].length >= 1 && [...name].length <= 100 && !CONTROL_CHARACTER.test(name) && name.trim() !== '';
}

/** If-None-Match as RFC 9110 compares it for GET: weak comparison, a list, or `*`. */
function fresh(ifNoneMatch: string | undefined): boolean {
  if (ifNoneMatch === undefined) return false;
  return ifNoneMatch.split(',').some((tag) => {
    const trimmed = tag.trim();
    return trimmed === '*' || trimmed.replace(/^W\//, '') === timezonesEtag;
  });
}

const app = Fastify({ bodyLimit: 16 * 1024 });
app.decorateRequest('user', null);
app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
  done(null, Object.fromEntries(new URLSearchParams(body as string)));
});

const required = { preHandler: authenticate(true) };
app.get('/api/v0/hello', { preHandler: authenticate(false) }, async (request, reply) => {
  reply.headers(request.user === null ? headers.hello : headers['hello-auth']);
  return success({ name: request.user?.name ?? 'World' });
});
app.get('/api/v0/user', required, async (request, reply) => {
  reply.headers(headers.user);
  return success(userView(request.user! as unknown as Record<string, unknown>));
});
app.post<{ Body: { name?: unknown } | undefined }>('/api/v0/user', required, async (request, reply) => {
  const name = request.body?.name;
  if (!validName(name)) return reply.code(400).send(failure('invalid_name'));
  const row = updateName.get(name, new Date().toISOString(), request.user!.id);
  if (row === undefined) return reply.code(404).send(failure('account_not_found'));
  reply.headers(headers['post-user']);
  return success(userView(row));
});
app.get('/api/v0/settings', required, async (request, reply) => {
  reply.headers(headers.settings);
  return success({ timezone: request.user!.timezone });
});
app.post<{ Body: { timezone?: unknown } | undefined }>('/api/v0/settings', required, async (request, reply) => {
  const timezone = request.body?.timezone;
  if (typeof timezone !== 'string' || !zones.has(timezone)) return reply.code(400).send(failure('invalid_timezone'));
  const row = updateTimezone.get(timezone, new Date().toISOString(), request.user!.id);
  if (row === undefined) return reply.code(404).send(failure('account_not_found'));
  reply.headers(headers['post-settings']);
  return success({ timezone: String(row.timezone) });
});
app.get('/api/v0/settings/timezones', required, async (request, reply) => {
  if (fresh(request.headers['if-none-match'])) {
    reply.code(304).headers(headers['timezones-304']).header('etag', timezonesEtag);
    return reply.send();
  }
  reply.headers(headers.timezones).header('etag', timezonesEtag).type('application/json; charset=utf-8');
  return timezonesBody;
});
app.setNotFoundHandler((_request, reply) => reply.code(404).send(failure('not_found')));
app.setErrorHandler((error: { statusCode?: number }, _request, reply) => {
  const status = error.statusCode ?? 500;
  if (status < 500) return reply.code(status).send(failure('bad_request'));
  return reply.code(500).send({ status: 'error', messages: [{ code: 'internal_error', message: 'internal_error' }], meta: {}, data: null });
});

const address = await app.listen({ port: Number(flags.port), host: flags.host });
process.stderr.write(`fastify peer listening at ${address}\n`);

function stop(): void {
  void app.close().then(() => {
    db.close();
    process.exit(0);
  });
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
