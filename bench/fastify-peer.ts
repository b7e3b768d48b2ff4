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
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import {
  failure,
  openPeerDatabase,
  peerFlags,
  peerHeaders,
  success,
  timezonesBody,
  timezonesEtag,
  userView,
  validName,
  zones,
  type User,
} from './peer-kit.ts';

const flags = peerFlags('fastify-peer.ts', '8092');
const { db, updateName, updateTimezone, userFromBasic } = openPeerDatabase(flags.database);
const headers = peerHeaders(flags.headers);
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
    const user = userFromBasic(header);
    if (user === null) return reply.code(401).headers(CHALLENGE).send(failure('invalid_credentials'));
    if (required && !user.premium) return reply.code(403).send(failure('premium_required'));
    request.user = user;
  };
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
  return success(userView(request.user!));
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
