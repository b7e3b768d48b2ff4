// The ceiling: a bare node:http server giving the benchmarked answers byte for byte as the service does, with every account in memory.
//
//   node bench/ceiling-server.ts [--port 8090] [--host 127.0.0.1] [--accounts FILE] [--headers FILE] [--sqlite PATH]
//
// --accounts: JSON [{userId, username, name, timezone, premium, key}] (without it, one demo account is made up and printed).
// --headers: the service's response headers captured by bench/run.ts (without it, the ones it sent when this was written).
// --sqlite: POST /settings and POST /user first write the row to this SQLite file (WAL, synchronous=FULL, the service's
// default) and answer from the row written, as the service does; without it, writes only touch the in-memory account.
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import timezoneData from '../src/domain/timezones.json' with { type: 'json' };
import { issueKey } from '../src/domain/api-keys.ts';
import { matchesEtag } from '../src/http/wire/etag.ts';
import type { CallId } from './calls.ts';
import { loadTemplates, type HeaderTemplate } from './header-templates.ts';

interface Account {
  userId: number;
  username: string;
  name: string;
  timezone: string;
  premium: boolean;
  key: Buffer;
}

interface AccountFileEntry {
  readonly userId: number;
  readonly username: string;
  readonly name: string;
  readonly timezone: string;
  readonly premium: boolean;
  readonly key: string;
}

const { values: flags } = parseArgs({
  options: {
    port: { type: 'string', default: '8090' },
    host: { type: 'string', default: '127.0.0.1' },
    accounts: { type: 'string' },
    headers: { type: 'string' },
    sqlite: { type: 'string' },
  },
});

const BODY_LIMIT_BYTES = 16 * 1024;
const RATE_WINDOW_MS = 60_000;
const PREFIX = '/api/v0';
const JSON_TYPE = 'application/json; charset=utf-8';

// --- accounts, in memory --------------------------------------------------------------------------------------------
const accounts = new Map<string, Account>();
function addAccount(entry: AccountFileEntry): void {
  accounts.set(entry.username.toLowerCase(), { ...entry, key: Buffer.from(entry.key) });
}
if (flags.accounts === undefined) {
  const key = issueKey('live').token;
  addAccount({ userId: 1, username: 'demo', name: 'Demo', timezone: 'UTC', premium: true, key });
  process.stderr.write(`no --accounts: try curl -u demo:${key} http://${flags.host}:${flags.port}${PREFIX}/user\n`);
} else {
  for (const entry of JSON.parse(readFileSync(flags.accounts, 'utf8')) as AccountFileEntry[]) addAccount(entry);
}

// --- the optional durable write ---------------------------------------------------------------------------------------
const db = flags.sqlite === undefined ? null : new DatabaseSync(flags.sqlite, { timeout: 5000 });
db?.exec('PRAGMA journal_mode = WAL');
db?.exec('PRAGMA synchronous = FULL');
const RETURNED = 'id, username, name, timezone, premium, created_at';
const updateName = db?.prepare(`UPDATE accounts SET name = ?, updated_at = ? WHERE id = ? RETURNING ${RETURNED}`);
const updateTimezone = db?.prepare(`UPDATE accounts SET timezone = ?, updated_at = ? WHERE id = ? RETURNING ${RETURNED}`);

// --- fixed answers --------------------------------------------------------------------------------------------------
const zones = new Set<string>(timezoneData.zones);
const timezonesBody = Buffer.from(
  JSON.stringify({ status: 'success', messages: [], meta: { description: 'Data is a list of valid timezones.' }, data: timezoneData.zones }),
);
const timezonesEtag = `"tz-${timezoneData.tzdata}-${createHash('sha256').update(timezonesBody).digest('base64url').slice(0, 16)}"`;

/** A template flattened once; per answer only the slots of the per-request values are filled in. */
interface PreparedHeaders {
  readonly flat: readonly string[];
  readonly idSlot: number;
  readonly remainingSlot: number;
  readonly resetSlot: number;
  readonly limit: number;
}

function prepare(template: HeaderTemplate): PreparedHeaders {
  const flat = template.flatMap(([name, value]) => [name, name.toLowerCase() === 'etag' ? timezonesEtag : value]);
  const slot = (name: string) => {
    const index = template.findIndex(([candidate]) => candidate.toLowerCase() === name);
    return index === -1 ? -1 : index * 2 + 1;
  };
  const limitSlot = slot('ratelimit-limit');
  return {
    flat,
    idSlot: slot('x-request-id'),
    remainingSlot: slot('ratelimit-remaining'),
    resetSlot: slot('ratelimit-reset'),
    limit: limitSlot === -1 ? Number.POSITIVE_INFINITY : Number(flat[limitSlot]),
  };
}

const templates = loadTemplates(flags.headers);
const prepared = Object.fromEntries(Object.entries(templates).map(([id, template]) => [id, prepare(template)])) as Record<CallId, PreparedHeaders>;

// --- rate budgets, as the service keeps them: a fixed window per key (per address when anonymous) ---------------------
const budgets = new Map<string, { used: number; resetAt: number }>();

function headersFor(headers: PreparedHeaders, budgetKey: string): string[] | null {
  const flat = headers.flat.slice();
  if (headers.idSlot !== -1) flat[headers.idSlot] = randomUUID();
  if (headers.remainingSlot !== -1) {
    const now = Date.now();
    let budget = budgets.get(budgetKey);
    if (budget === undefined || now >= budget.resetAt) {
      budget = { used: 0, resetAt: now + RATE_WINDOW_MS };
      budgets.set(budgetKey, budget);
    }
    if (++budget.used > headers.limit) return null;
    flat[headers.remainingSlot] = String(headers.limit - budget.used);
    if (headers.resetSlot !== -1) flat[headers.resetSlot] = String(Math.ceil((budget.resetAt - now) / 1000));
  }
  return flat;
}

function answer(res: ServerResponse, status: number, headers: string[], body: string | Buffer | null): void {
  if (body !== null) headers.push('content-length', String(Buffer.byteLength(body)));
  res.writeHead(status, headers);
  res.end(body ?? undefined);
}

/** Failures are not benchmarked: they keep the envelope and status, with plain headers. */
function fail(res: ServerResponse, status: number, code: string, extra: Record<string, string> = {}): void {
  const body = JSON.stringify({ status: status >= 500 ? 'error' : 'fail', messages: [{ code, message: code }], meta: {}, data: null });
  res.writeHead(status, { ...extra, 'content-type': JSON_TYPE, 'cache-control': 'no-store', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function ok(res: ServerResponse, id: CallId, budgetKey: string, data: unknown): void {
  const headers = headersFor(prepared[id], budgetKey);
  if (headers === null) return fail(res, 429, 'rate_limited');
  answer(res, 200, headers, JSON.stringify({ status: 'success', messages: [], meta: {}, data }));
}

// --- authentication ---------------------------------------------------------------------------------------------------
const CHALLENGE = { 'www-authenticate': 'Basic realm="account-api", charset="UTF-8"' };

/** The Premium account named by valid Basic credentials; otherwise answers the failure and returns null. */
function caller(req: IncomingMessage, res: ServerResponse, premium: boolean): Account | null | undefined {
  const header = req.headers.authorization;
  if (header === undefined) {
    if (!premium) return undefined;
    fail(res, 401, 'credentials_required', CHALLENGE);
    return null;
  }
  const decoded = header.startsWith('Basic ') ? Buffer.from(header.slice(6), 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  const account = colon === -1 ? undefined : accounts.get(decoded.slice(0, colon).toLowerCase());
  const key = Buffer.from(decoded.slice(colon + 1));
  if (account === undefined || account.key.length !== key.length || !timingSafeEqual(account.key, key)) {
    fail(res, 401, 'invalid_credentials', CHALLENGE);
    return null;
  }
  if (premium && !account.premium) {
    fail(res, 403, 'premium_required');
    return null;
  }
  return account;
}

function userView(account: { userId: number; username: string; name: string; timezone: string }) {
  return { user_id: account.userId, username: account.username, name: account.name, timezone: account.timezone };
}

// --- bodies -----------------------------------------------------------------------------------------------------------
/** Reads a form with exactly the one parameter `name`, then calls `use`; any other body is answered as a failure. */
function readParameter(req: IncomingMessage, res: ServerResponse, name: string, use: (value: string) => void): void {
  const type = req.headers['content-type'];
  if (type === undefined || type.split(';')[0]!.trim().toLowerCase() !== 'application/x-www-form-urlencoded') {
    req.resume();
    return fail(res, 415, 'unsupported_media_type');
  }
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size <= BODY_LIMIT_BYTES) chunks.push(chunk);
  });
  req.on('end', () => {
    if (size > BODY_LIMIT_BYTES) return fail(res, 413, 'body_too_large');
    const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
    let value: string | undefined;
    for (const [parameter, given] of form) {
      if (parameter !== name) return fail(res, 400, 'unknown_parameter');
      if (value !== undefined) return fail(res, 400, 'duplicate_parameter');
      value = given;
    }
    if (value === undefined) return fail(res, 400, 'missing_parameter');
    use(value);
  });
}

const CONTROL_CHARACTER = /[\p{Cc}\u2028\u2029]/u;
function validName(name: string): boolean {
  let length = 0;
  for (const _ of name) length++;
  return length >= 1 && length <= 100 && !CONTROL_CHARACTER.test(name) && name.trim() !== '';
}

/** Writes the row when --sqlite is given (the answer then shows the row as written), else only the in-memory account. */
function write(account: Account, column: 'name' | 'timezone', value: string) {
  const statement = column === 'name' ? updateName : updateTimezone;
  if (statement !== undefined) {
    const row = statement.get(value, new Date().toISOString(), account.userId) as Record<string, unknown> | undefined;
    if (row === undefined) return null;
    account.name = String(row.name);
    account.timezone = String(row.timezone);
  } else {
    account[column] = value;
  }
  return account;
}

// --- routes -----------------------------------------------------------------------------------------------------------
function route(req: IncomingMessage, res: ServerResponse): void {
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  let path = query === -1 ? url : url.slice(0, query);
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  const get = req.method === 'GET';

  if (path === `${PREFIX}/hello` && get) {
    const account = caller(req, res, false);
    if (account === null) return;
    if (account === undefined) return ok(res, 'hello', `addr:${req.socket.remoteAddress}`, { name: 'World' });
    return ok(res, 'hello-auth', account.username, { name: account.name });
  }
  if (path === `${PREFIX}/user` || path === `${PREFIX}/settings` || path === `${PREFIX}/settings/timezones`) {
    if (!get && (req.method !== 'POST' || path.endsWith('timezones'))) return fail(res, 405, 'method_not_allowed');
    const account = caller(req, res, true);
    if (!account) return;
    if (path === `${PREFIX}/settings/timezones`) {
      const fresh = matchesEtag(req.headers['if-none-match'], timezonesEtag);
      const headers = headersFor(prepared[fresh ? 'timezones-304' : 'timezones'], account.username);
      if (headers === null) return fail(res, 429, 'rate_limited');
      return answer(res, fresh ? 304 : 200, headers, fresh ? null : timezonesBody);
    }
    const isUser = path === `${PREFIX}/user`;
    if (get) return ok(res, isUser ? 'user' : 'settings', account.username, isUser ? userView(account) : { timezone: account.timezone });
    return readParameter(req, res, isUser ? 'name' : 'timezone', (value) => {
      if (isUser ? !validName(value) : !zones.has(value)) return fail(res, 400, isUser ? 'invalid_name' : 'invalid_timezone');
      const written = write(account, isUser ? 'name' : 'timezone', value);
      if (written === null) return fail(res, 404, 'account_not_found');
      ok(res, isUser ? 'post-user' : 'post-settings', account.username, isUser ? userView(written) : { timezone: written.timezone });
    });
  }
  fail(res, 404, 'not_found');
}

const server = createServer({ keepAliveTimeout: 5000 }, route);
server.listen(Number(flags.port), flags.host, () => {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : flags.port;
  process.stderr.write(`ceiling listening at http://${flags.host}:${port} (${db === null ? 'memory' : 'node:sqlite, synchronous=FULL'})\n`);
});

function stop(): void {
  server.close(() => {
    db?.close();
    process.exit(0);
  });
  server.closeAllConnections();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
