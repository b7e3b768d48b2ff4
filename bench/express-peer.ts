// The peer: the implementation most teams would write. Express 5, Basic auth checked with a SQLite query per request.
//
//   node bench/express-peer.ts --database PATH [--port 8091] [--host 127.0.0.1] [--headers FILE]
//
// PATH is a database with the service's schema (accounts, api_keys holding SHA-256 hashes of the keys). Writes use the
// service's default durability: WAL with synchronous=FULL. --headers: the fixed response headers captured from the
// service by bench/run.ts; the peer sends those a typical app would (security headers, Cache-Control, ETag), not the
// request id or rate-limit headers.
import { createHash, timingSafeEqual } from 'node:crypto';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import express, { type NextFunction, type Request, type Response } from 'express';
import timezoneData from '../src/domain/timezones.json' with { type: 'json' };
import type { CallId } from './calls.ts';
import { loadTemplates, typicalHeaders } from './header-templates.ts';

const { values: flags } = parseArgs({
  options: {
    port: { type: 'string', default: '8091' },
    host: { type: 'string', default: '127.0.0.1' },
    database: { type: 'string' },
    headers: { type: 'string' },
  },
});
if (flags.database === undefined) {
  process.stderr.write('usage: node bench/express-peer.ts --database PATH [--port N] [--host H] [--headers FILE]\n');
  process.exit(2);
}

type User = {
  id: number;
  username: string;
  name: string;
  timezone: string;
  premium: boolean;
};

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

declare global {
  namespace Express {
    interface Request {
      user?: User;
    }
  }
}

/** Looks the username up and compares the key's hash with each of its keys. */
function authenticate(required: boolean) {
  return (req: Request, res: Response, next: NextFunction) => {
    const header = req.get('authorization');
    if (header === undefined) {
      if (!required) return next();
      return res.status(401).set('WWW-Authenticate', 'Basic realm="account-api"').json(failure('credentials_required'));
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
    if (row === undefined) {
      return res.status(401).set('WWW-Authenticate', 'Basic realm="account-api"').json(failure('invalid_credentials'));
    }
    const user: User = {
      id: Number(row.id),
      username: String(row.username),
      name: String(row.name),
      timezone: String(row.timezone),
      premium: row.premium === 1,
    };
    if (required && !user.premium) return res.status(403).json(failure('premium_required'));
    req.user = user;
    next();
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

const app = express();
app.set('x-powered-by', false);
// Express would otherwise hash every body for an ETag; the service tags only the timezone list.
app.set('etag', false);
app.use(express.urlencoded({ extended: false, limit: '16kb' }));

const api = express.Router();
api.get('/hello', authenticate(false), (req, res) => {
  res.set(req.user === undefined ? headers.hello : headers['hello-auth']).json(success({ name: req.user?.name ?? 'World' }));
});
api.get('/user', authenticate(true), (req, res) => {
  res.set(headers.user).json(success(userView(req.user!)));
});
api.post('/user', authenticate(true), (req, res) => {
  const name: unknown = req.body?.name;
  if (!validName(name)) return res.status(400).json(failure('invalid_name'));
  const row = updateName.get(name, new Date().toISOString(), req.user!.id);
  if (row === undefined) return res.status(404).json(failure('account_not_found'));
  res.set(headers['post-user']).json(success(userView(row)));
});
api.get('/settings', authenticate(true), (req, res) => {
  res.set(headers.settings).json(success({ timezone: req.user!.timezone }));
});
api.post('/settings', authenticate(true), (req, res) => {
  const timezone: unknown = req.body?.timezone;
  if (typeof timezone !== 'string' || !zones.has(timezone)) return res.status(400).json(failure('invalid_timezone'));
  const row = updateTimezone.get(timezone, new Date().toISOString(), req.user!.id);
  if (row === undefined) return res.status(404).json(failure('account_not_found'));
  res.set(headers['post-settings']).json(success({ timezone: String(row.timezone) }));
});
api.get('/settings/timezones', authenticate(true), (req, res) => {
  // With an ETag set, res.send answers 304 by itself when If-None-Match matches (req.fresh).
  res.set(headers.timezones).set('ETag', timezonesEtag).send(timezonesBody);
});
app.use('/api/v0', api);
app.use((_req, res) => {
  res.status(404).json(failure('not_found'));
});
app.use((_error: unknown, _req: Request, res: Response, _next: NextFunction) => {
  res.status(500).json({ status: 'error', messages: [{ code: 'internal_error', message: 'internal_error' }], meta: {}, data: null });
});

const server = app.listen(Number(flags.port), flags.host, () => {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : flags.port;
  process.stderr.write(`express peer listening at http://${flags.host}:${port}\n`);
});

function stop(): void {
  server.close(() => {
    db.close();
    process.exit(0);
  });
  server.closeAllConnections();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
