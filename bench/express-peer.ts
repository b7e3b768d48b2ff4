// The peer: the implementation most teams would write. Express 5, Basic auth checked with a SQLite query per request.
//
//   node bench/express-peer.ts --database PATH [--port 8091] [--host 127.0.0.1] [--headers FILE]
//
// PATH is a database with the service's schema (accounts, api_keys holding SHA-256 hashes of the keys). Writes use the
// service's default durability: WAL with synchronous=FULL. --headers: the fixed response headers captured from the
// service by bench/run.ts; the peer sends those a typical app would (security headers, Cache-Control, ETag), not the
// request id or rate-limit headers.
import express, { type NextFunction, type Request, type Response } from 'express';
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

const flags = peerFlags('express-peer.ts', '8091');
const { db, updateName, updateTimezone, userFromBasic } = openPeerDatabase(flags.database);
const headers = peerHeaders(flags.headers);

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
    const user = userFromBasic(header);
    if (user === null) {
      return res.status(401).set('WWW-Authenticate', 'Basic realm="account-api"').json(failure('invalid_credentials'));
    }
    if (required && !user.premium) return res.status(403).json(failure('premium_required'));
    req.user = user;
    next();
  };
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
