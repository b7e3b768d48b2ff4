// Environment variables and command-line flags, parsed once into one typed, validated configuration.
import { isIP } from 'node:net';
import { isAbsolute, resolve } from 'node:path';
import type { KeyEnvironment } from './domain/api-keys.ts';
import { DEFAULT_RETRY_SCHEDULE_MS, DELIVERY_TIMEOUT_MS } from './domain/webhooks/retry-schedule.ts';
import packageJson from '../package.json' with { type: 'json' };

const packageVersion: string = packageJson.version;

/**
 * Every environment variable read, here and nowhere else (`Environment` admits only these names). Held to what is read by
 * config-variables.test.ts, and to docs/operations.md's table by docs.test.ts.
 */
export const ENVIRONMENT_VARIABLES = [
  // serve and the CLI
  'ACCOUNT_API_SANDBOX', 'DATABASE_URL', 'SANDBOX_DATABASE_URL', 'HOST', 'PORT', 'WORKERS', 'SANDBOX_URL', 'LOG_LEVEL',
  // the engines
  'SQLITE_SYNCHRONOUS', 'SQLITE_BUSY_TIMEOUT_MS', 'CREDENTIAL_CACHE_SIZE', 'CREDENTIAL_CACHE_MAX_AGE_MS', 'PG_POOL_MAX', 'PG_CONNECT_TIMEOUT_MS', 'PG_STATEMENT_TIMEOUT_MS', 'PG_PREPARED_STATEMENTS', 'PG_POOLER',
  'STORE_FAIL_FAST', 'REDIS_URL', 'REDIS_CLUSTER_NODES', 'REDIS_KEY_PREFIX',
  // limits
  'BODY_LIMIT_BYTES', 'REQUEST_TIMEOUT_MS', 'HEADERS_TIMEOUT_MS', 'KEEP_ALIVE_TIMEOUT_MS', 'MAX_CONNECTIONS', 'MAX_HEADER_BYTES', 'MAX_PARAMETERS',
  'MAX_PARAMETER_LENGTH', 'MAX_EVENT_LOOP_DELAY_MS', 'SHUTDOWN_TIMEOUT_MS', 'RATE_LIMIT_WINDOW_MS', 'RATE_LIMIT_PER_KEY', 'RATE_LIMIT_PER_ADDRESS',
  'RATE_LIMIT_AUTH_FAILURES', 'RATE_LIMIT_MAX_WINDOWS', 'TRUST_PROXY', 'KEY_TOUCH_INTERVAL_MS', 'AUDIT_RETENTION_DAYS',
  'KEY_USAGE_FLUSH_MS', 'KEY_USAGE_RETENTION_DAYS',
  // signals
  'METRICS_PORT', 'METRICS_HOST', 'METRICS_TOKEN', 'OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_SERVICE_NAME', 'OTEL_TRACES_SAMPLER', 'OTEL_TRACES_SAMPLER_ARG',
  // browsers, the admin API, webhooks
  'CORS_ORIGINS', 'HSTS_MAX_AGE', 'ADMIN_PORT', 'ADMIN_HOST', 'ADMIN_RATE_LIMIT_PER_TOKEN', 'CONSOLE_IDLE_MINUTES', 'CONSOLE_MAX_HOURS', 'WEBHOOK_ALLOW_PRIVATE', 'WEBHOOK_RETRY_SCHEDULE',
  'WEBHOOK_DISABLE_AFTER', 'WEBHOOK_CONCURRENCY', 'WEBHOOK_LEASE_MS', 'WEBHOOK_SECRETS_KEY', 'WEBHOOK_POLL_INTERVAL_MS',
  // account-api call
  'ACCOUNT_API_URL', 'ACCOUNT_API_SANDBOX_URL', 'ACCOUNT_API_USERNAME', 'ACCOUNT_API_KEY',
] as const;

export type EnvironmentVariable = (typeof ENVIRONMENT_VARIABLES)[number];

/** process.env fits, and so does a test's object of a few names. */
export type Environment = { readonly [Name in EnvironmentVariable]?: string | undefined };

export type DatabaseTarget = { readonly engine: 'sqlite'; readonly path: string } | { readonly engine: 'postgres'; readonly url: string };

export interface Config {
  readonly environment: KeyEnvironment;
  readonly host: string;
  readonly port: number;
  /** `serve --workers`; 1: this process serves alone. */
  readonly workers: number;
  readonly database: DatabaseTarget;
  readonly sqliteSynchronous: 'full' | 'normal';
  readonly sqliteBusyTimeoutMs: number;
  /** In memory: checked against data_version (SQLite) or the account's credentials version (PostgreSQL + Redis); 0: off. */
  readonly credentialCacheSize: number;
  /** PostgreSQL + Redis: the most a cached credential is trusted, announced or not (a crash's bound); 0: off. */
  readonly credentialCacheMaxAgeMs: number;
  readonly postgres: PostgresSettings;
  /** Exit when the database does not answer at start, instead of serving 503s while trying. */
  readonly storeFailFast: boolean;
  readonly bodyLimitBytes: number;
  readonly connections: ConnectionSettings;
  readonly parameters: ParameterSettings;
  /** Past this lag, 503 `overloaded`; 0: off. */
  readonly maxEventLoopDelayMs: number;
  /** After SIGTERM, exit 1 even if closing has not finished. */
  readonly shutdownTimeoutMs: number;
  readonly redis: RedisSettings | null;
  readonly rateLimits: RateLimitSettings;
  /** false: the socket address is the client. */
  readonly trustProxy: TrustedProxies;
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  readonly keyTouchIntervalMs: number;
  /** Pruned by serve, in the background. */
  readonly auditRetentionDays: number;
  readonly keyUsage: KeyUsageSettings;
  readonly apiPrefix: string;
  /** For the live server's OpenAPI document; null lists none rather than guess. */
  readonly sandboxUrl: string | null;
  readonly version: string;
  readonly metrics: MetricsSettings;
  readonly admin: AdminSettings;
  /** Empty: CORS is off (no Access-Control-* header at all). */
  readonly corsOrigins: readonly string[];
  /** Seconds; null: no HSTS header (TLS is the proxy's, which may send its own). */
  readonly hstsMaxAgeSeconds: number | null;
  readonly webhooks: WebhookSettings;
  /** docs/operations.md, Traces; null: no tracing at all. */
  readonly tracing: TracingSettings | null;
}

/** Usage per key (docs/operations.md, Usage per key). */
export interface KeyUsageSettings {
  /** How often each process writes what it counted; 0: usage is not counted at all. */
  readonly flushIntervalMs: number;
  /** Days kept; older ones are pruned by serve, in the background. */
  readonly retentionDays: number;
}

/** The specification's names. */
export const TRACE_SAMPLERS = [
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
  'always_on',
  'always_off',
  'traceidratio',
] as const;

export interface TracingSettings {
  /** OTEL_EXPORTER_OTLP_ENDPOINT with `/v1/traces` appended, as the specification says. */
  readonly tracesUrl: string;
  readonly serviceName: string;
  readonly sampler: (typeof TRACE_SAMPLERS)[number];
  /** For the `traceidratio` samplers, 0 to 1. */
  readonly sampleRatio: number;
}

export interface WebhookSettings {
  /** WEBHOOK_ALLOW_PRIVATE=1: private, loopback and link-local addresses too. */
  readonly allowPrivate: boolean;
  /** One attempt more than there are waits. */
  readonly retryScheduleMs: readonly number[];
  /** Longer than an attempt can take. */
  readonly leaseMs: number;
  /** Per process. */
  readonly concurrency: number;
  /** When nothing is due. */
  readonly pollIntervalMs: number;
  /** An endpoint failing for this long is disabled. */
  readonly disableAfterMs: number;
  /** Seals signing secrets at rest; null: stored as they are. */
  readonly secretsKey: Buffer | null;
}

export interface MetricsSettings {
  /** A separate Prometheus listener (no auth: bind it where only the scraper reaches); null: none. */
  readonly port: number | null;
  readonly host: string;
  /** For /metrics on the public port; null: not served there (404). */
  readonly token: string | null;
}

export interface AdminSettings {
  /** Null: no admin listener at all. */
  readonly port: number | null;
  /** Loopback by default: the admin API changes every account. */
  readonly host: string;
  /** Per admin token per window; 0: off. */
  readonly perToken: number;
  /** The console's sessions (src/console/sessions.ts): ended after this long without a request, and this long after sign-in. */
  readonly consoleIdleMs: number;
  readonly consoleMaxMs: number;
}

export interface PostgresSettings {
  /** Per instance; N instances hold up to N times this many. */
  readonly poolMax: number;
  /** Then 503. */
  readonly connectTimeoutMs: number;
  /** Then PostgreSQL cancels it. */
  readonly statementTimeoutMs: number;
  /** Prepared once per connection, then only bound: never behind a transaction pooler. */
  readonly preparedStatements: boolean;
  /** `transaction`: the database URL is a transaction pooler (PgBouncer), which keeps no session state between transactions. */
  readonly pooler: 'none' | 'transaction';
}

/** Slow, idle or oversized connections are closed. */
export interface ConnectionSettings {
  /** Headers and body. */
  readonly requestTimeoutMs: number;
  /** No more than requestTimeoutMs. */
  readonly headersTimeoutMs: number;
  readonly keepAliveTimeoutMs: number;
  /** Past it, connections are closed at once. */
  readonly maxConnections: number;
  /** Request line and headers, in bytes; past it, 431. */
  readonly maxHeaderBytes: number;
}

/** Forms and JSON alike. */
export interface ParameterSettings {
  readonly maxParameters: number;
  /** Code points, per value. */
  readonly maxParameterLength: number;
}

/** One Redis (REDIS_URL), or a Redis Cluster found through its seed nodes (REDIS_CLUSTER_NODES); never both. */
export type RedisTarget =
  | { readonly cluster: false; readonly url: string }
  /** Each a redis:// or rediss:// URL of the same scheme and credentials, which every node of the cluster shares. */
  | { readonly cluster: true; readonly nodes: readonly string[] };

export interface RedisSettings {
  readonly target: RedisTarget;
  /** So one Redis can serve several deployments. */
  readonly keyPrefix: string;
}

/** Per window; 0: off. */
export interface RateLimitSettings {
  readonly windowMs: number;
  readonly perKey: number;
  readonly perAddress: number;
  /** Per address, on every endpoint: a guesser is stopped, the account holder is not. */
  readonly authFailuresPerAddress: number;
  /** Without Redis: windows kept per budget; past it the oldest fold into a sketch that never under-counts. */
  readonly maxWindows: number;
}

/**
 * `false`: nobody's X-Forwarded-For is believed. A number: that many proxies in front. A list: addresses, CIDR ranges, and
 * proxy-addr's `loopback`, `linklocal`, `uniquelocal`.
 */
export type TrustedProxies = false | number | readonly string[];

/** Command-line values win over the environment. */
export interface ConfigFlags {
  readonly sandbox?: boolean;
  readonly host?: string;
  readonly port?: string;
  readonly databaseUrl?: string;
  readonly workers?: string;
  readonly storeFailFast?: boolean;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
  /** The refused flag (a usage error to the CLI); undefined for an environment variable. */
  readonly flag: string | undefined;

  constructor(message: string, options: { readonly flag?: string | undefined } = {}) {
    super(message);
    this.flag = options.flag;
  }
}

/** A variable's name, or a flag (with the variable it stands for, if any). */
type Source = string | { readonly flag: string; readonly variable?: string };

function named(source: Source): { name: string; flag: string | undefined } {
  if (typeof source === 'string') return { name: source, flag: undefined };
  return { name: source.variable === undefined ? source.flag : `${source.flag} (${source.variable})`, flag: source.flag };
}

function flagOr(flag: string, given: string | undefined, variable: string): Source {
  return given === undefined ? variable : { flag, variable };
}

export const DEFAULT_DATABASE_URL = 'sqlite:./data/account-api.db';
export const DEFAULT_SANDBOX_DATABASE_URL = 'sqlite:./data/sandbox.db';
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function integer(source: Source, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    const { name, flag } = named(source);
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}; got '${raw}'.`, { flag });
  }
  return value;
}

/** An IP address, or a host name's letters, digits, hyphens and dots; refused before any lookup. */
function listenHost(source: Source, raw: string | undefined, fallback: string): string {
  if (raw === undefined || raw === '') return fallback;
  const label = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
  if (isIP(raw) !== 0 || (raw.length <= 253 && new RegExp(`^${label}(?:\\.${label})*\\.?$`).test(raw))) return raw;
  const { name, flag } = named(source);
  throw new ConfigError(`${name} must be an IP address or a host name, such as 127.0.0.1, :: or localhost; got '${raw}'.`, { flag });
}

function oneOf<T extends string>(name: string, raw: string | undefined, allowed: readonly T[], fallback: T): T {
  if (raw === undefined || raw === '') return fallback;
  const value = raw.toLowerCase() as T;
  if (!allowed.includes(value)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}; got '${raw}'.`);
  return value;
}

/** `sqlite:PATH`, `sqlite://PATH`, `file:PATH` or a bare path: SQLite; `postgres://...`: PostgreSQL. */
export function parseDatabaseUrl(url: string, cwd: string, source: Source = 'DATABASE_URL'): DatabaseTarget {
  if (/^postgres(ql)?:\/\//i.test(url)) return { engine: 'postgres', url };
  const match = /^(?:sqlite|file):(?:\/\/)?(.*)$/i.exec(url);
  const path = match === null ? url : match[1]!;
  const { name, flag } = named(source);
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url) && match === null) {
    throw new ConfigError(`${name} '${url}' names an engine this server does not know; use sqlite:PATH or postgres://...`, { flag });
  }
  if (path === '') throw new ConfigError(`${name} names no SQLite file; use e.g. sqlite:./data/account-api.db.`, { flag });
  return { engine: 'sqlite', path: path === ':memory:' || isAbsolute(path) ? path : resolve(cwd, path) };
}

/** As a browser sends them: scheme://host[:port], no path, no wildcard (credentials are allowed). */
function corsOrigins(raw: string | undefined): string[] {
  const origins = (raw ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const origin of origins) {
    if (!/^https?:\/\/[^/\s?#*]+$/i.test(origin)) {
      throw new ConfigError(`CORS_ORIGINS takes exact origins such as https://app.example.com (no path, no *); got '${origin}'.`);
    }
  }
  return origins;
}

const PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/** A wrong entry would otherwise be read as some other address, or crash at start. */
export function trustedProxies(raw: string | undefined): TrustedProxies {
  const value = (raw ?? '').trim();
  if (value === '' || value.toLowerCase() === 'false') return false;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops < 1 || hops > 100) throw new ConfigError(`TRUST_PROXY as a hop count must be from 1 to 100; got '${raw}'.`);
    return hops;
  }
  if (value.toLowerCase() === 'true') {
    throw new ConfigError(
      "TRUST_PROXY=true would believe an X-Forwarded-For from anyone, so any client could choose its own address (and rate budget); name the proxies (addresses, CIDR ranges, 'loopback') or give their number of hops.",
    );
  }
  return value.split(',').map((part) => {
    const entry = part.trim();
    if (PROXY_NAMES.includes(entry.toLowerCase())) return entry.toLowerCase();
    const [address = '', bits, extra] = entry.split('/');
    const family = isIP(address);
    const maxBits = family === 6 ? 128 : 32;
    const validBits = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= maxBits);
    if (family === 0 || !validBits || extra !== undefined) {
      throw new ConfigError(
        `TRUST_PROXY takes addresses, CIDR ranges (10.0.0.0/8, fd00::/8), 'loopback', 'linklocal', 'uniquelocal', or a hop count; '${entry}' is none of these.`,
      );
    }
    // A range that wide (or an IPv4-mapped one covering IPv4 at large) would let most clients choose their address.
    const mapped = family === 6 && /^::ffff:/i.test(address);
    const prefix = bits === undefined ? maxBits : Number(bits) - (mapped ? 96 : 0);
    // Private IPv6 (fc00::/7) may be named whole, as private IPv4 ranges may.
    const uniqueLocal = family === 6 && !mapped && /^f[cd]/i.test(address);
    if (prefix < (family === 4 || mapped ? 8 : uniqueLocal ? 7 : 16)) {
      throw new ConfigError(`TRUST_PROXY range '${entry}' is too wide to name proxies (at least /8 for IPv4, /16 for IPv6, /7 for fc00::/7).`);
    }
    return entry;
  });
}

function metricsToken(raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return null;
  // Short tokens could be guessed: /metrics on the public port has no failed-attempt budget of its own.
  if (raw.length < 16 || !/^[\x21-\x7e]+$/.test(raw)) {
    throw new ConfigError('METRICS_TOKEN must be at least 16 printable characters without spaces (e.g. openssl rand -hex 32).');
  }
  return raw;
}

function connectionSettings(env: Environment): ConnectionSettings {
  const requestTimeoutMs = integer('REQUEST_TIMEOUT_MS', env.REQUEST_TIMEOUT_MS, 10_000, 100, 600_000);
  const headersTimeoutMs = integer('HEADERS_TIMEOUT_MS', env.HEADERS_TIMEOUT_MS, 5000, 100, 600_000);
  // Node refuses to start a server whose headers may take longer than the whole request.
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(`HEADERS_TIMEOUT_MS (${headersTimeoutMs}) must not be more than REQUEST_TIMEOUT_MS (${requestTimeoutMs}).`);
  }
  return {
    requestTimeoutMs,
    headersTimeoutMs,
    keepAliveTimeoutMs: integer('KEEP_ALIVE_TIMEOUT_MS', env.KEEP_ALIVE_TIMEOUT_MS, 5000, 100, 600_000),
    maxConnections: integer('MAX_CONNECTIONS', env.MAX_CONNECTIONS, 10_000, 1, 1_000_000),
    maxHeaderBytes: integer('MAX_HEADER_BYTES', env.MAX_HEADER_BYTES, 16 * 1024, 1024, 1024 * 1024),
  };
}

/** No braces: every script's keys share one Redis Cluster hash tag ({u:<owner>}), which a brace in the prefix would replace. */
function redisKeyPrefix(raw: string | undefined): string {
  const prefix = raw ?? 'account-api:';
  if (/[{}]/.test(prefix)) {
    throw new ConfigError(`REDIS_KEY_PREFIX must not contain '{' or '}' (Redis Cluster reads them as a hash tag); got '${prefix}'.`);
  }
  return prefix;
}

function redisUrl(url: string): string {
  if (!/^rediss?:\/\//i.test(url)) throw new ConfigError(`REDIS_URL must start with redis:// or rediss://; got '${url}'.`);
  return url;
}

/**
 * REDIS_CLUSTER_NODES: seed nodes, comma-separated, each `host:port` or a redis:// or rediss:// URL (`[::1]:7000` for IPv6).
 * Any one that answers tells the client the rest; one scheme and one set of credentials for all, as a cluster has; no
 * database number, as a cluster has only database 0.
 */
function redisClusterNodes(raw: string): string[] {
  const entries = raw.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  if (entries.length === 0) throw new ConfigError('REDIS_CLUSTER_NODES must list at least one host:port.');
  const nodes = entries.map((entry) => {
    const url = /^[a-z][a-z0-9+.-]*:\/\//i.test(entry) ? entry : `redis://${entry}`;
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new ConfigError(`REDIS_CLUSTER_NODES: '${entry}' is neither host:port nor a redis:// URL.`);
    }
    if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
      throw new ConfigError(`REDIS_CLUSTER_NODES: '${entry}' must be host:port or start with redis:// or rediss://.`);
    }
    if (parsed.hostname === '' || parsed.port === '') throw new ConfigError(`REDIS_CLUSTER_NODES: '${entry}' must name a host and a port.`);
    if (parsed.pathname !== '' && parsed.pathname !== '/' && parsed.pathname !== '/0') {
      throw new ConfigError(`REDIS_CLUSTER_NODES: '${entry}' names a database; a Redis Cluster has only database 0.`);
    }
    return parsed;
  });
  const identity = (url: URL) => `${url.protocol}//${url.username}:${url.password}`;
  if (new Set(nodes.map(identity)).size > 1) {
    throw new ConfigError('REDIS_CLUSTER_NODES: every node must have the same scheme and credentials (a cluster shares them).');
  }
  return nodes.map((url) => url.href);
}

function redisSettings(env: Environment): RedisSettings | null {
  if (env.REDIS_URL && env.REDIS_CLUSTER_NODES) {
    throw new ConfigError('Set REDIS_URL (one Redis) or REDIS_CLUSTER_NODES (a Redis Cluster), not both.');
  }
  const keyPrefix = () => redisKeyPrefix(env.REDIS_KEY_PREFIX);
  if (env.REDIS_URL) return { target: { cluster: false, url: redisUrl(env.REDIS_URL) }, keyPrefix: keyPrefix() };
  if (env.REDIS_CLUSTER_NODES) return { target: { cluster: true, nodes: redisClusterNodes(env.REDIS_CLUSTER_NODES) }, keyPrefix: keyPrefix() };
  return null;
}

/** Refused rather than half working when several processes cannot share it. */
function checkWorkers(config: Config): Config {
  if (config.workers === 1) return config;
  if (config.database.engine === 'sqlite' && config.database.path === ':memory:') {
    throw new ConfigError('WORKERS (--workers) above 1 needs a database file the workers share; each would get its own sqlite::memory:.');
  }
  if (config.metrics.token !== null) {
    throw new ConfigError(
      'METRICS_TOKEN with WORKERS (--workers) above 1 would serve one worker\'s counters at random; use METRICS_PORT, where the primary sums all workers.',
    );
  }
  return config;
}

function checkAdminPort(config: Config): Config {
  const { port } = config.admin;
  if (port === null || port === 0) return config;
  if (port === config.port) throw new ConfigError(`ADMIN_PORT must differ from the public port (${config.port}); the admin API has a listener of its own.`);
  if (port === config.metrics.port) throw new ConfigError(`ADMIN_PORT must differ from METRICS_PORT (${port}).`);
  return config;
}

function tracingSettings(env: Environment): TracingSettings | null {
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (endpoint === undefined || endpoint === '') return null;
  if (!/^https?:\/\/[^/\s?#]+(\/[^\s?#]*)?$/i.test(endpoint)) {
    throw new ConfigError(`OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL without query (e.g. http://collector:4318); got '${endpoint}'.`);
  }
  const ratio = env.OTEL_TRACES_SAMPLER_ARG === undefined || env.OTEL_TRACES_SAMPLER_ARG === '' ? 1 : Number(env.OTEL_TRACES_SAMPLER_ARG);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) {
    throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1; got '${env.OTEL_TRACES_SAMPLER_ARG}'.`);
  }
  return {
    tracesUrl: `${endpoint.replace(/\/+$/, '')}/v1/traces`,
    serviceName: env.OTEL_SERVICE_NAME || 'account-api',
    sampler: oneOf('OTEL_TRACES_SAMPLER', env.OTEL_TRACES_SAMPLER, TRACE_SAMPLERS, 'parentbased_always_on'),
    sampleRatio: ratio,
  };
}

/** A guess (localhost) would be wrong for every deployment but one. */
function sandboxUrl(raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return null;
  if (!/^https?:$/.test(URL.parse(raw)?.protocol ?? '')) {
    throw new ConfigError(`SANDBOX_URL must be the sandbox's http:// or https:// URL (e.g. https://sandbox.example.com); got '${raw}'.`);
  }
  return raw;
}

function sameDatabase(database: DatabaseTarget, liveUrl: string, cwd: string): boolean {
  if (database.engine === 'sqlite' && database.path === ':memory:') return false;
  try {
    return JSON.stringify(parseDatabaseUrl(liveUrl, cwd)) === JSON.stringify(database);
  } catch {
    return false;
  }
}

/**
 * Behind a transaction pooler a statement prepared in one transaction is gone (or another client's) in the next, so named
 * statements are off there, and asking for them is refused: through PgBouncer 1.18 a second instance's first statement
 * failed with `prepared statement ... already exists` (issue 36; docs/deploy.md#through-pgbouncer).
 */
function postgresSettings(env: Environment): PostgresSettings {
  const pooler = oneOf('PG_POOLER', env.PG_POOLER, ['none', 'transaction'], 'none');
  const prepared = oneOf('PG_PREPARED_STATEMENTS', env.PG_PREPARED_STATEMENTS, ['on', 'off'], pooler === 'none' ? 'on' : 'off');
  if (prepared === 'on' && pooler === 'transaction') {
    throw new ConfigError(
      'PG_PREPARED_STATEMENTS=on cannot be used with PG_POOLER=transaction: a transaction pooler hands each transaction to ' +
        "whichever server connection is free, where another client's statement may already hold the name. Leave " +
        'PG_PREPARED_STATEMENTS unset (off behind the pooler), or connect directly with PG_POOLER=none (docs/deploy.md#through-pgbouncer).',
    );
  }
  return {
    poolMax: integer('PG_POOL_MAX', env.PG_POOL_MAX, 10, 1, 1000),
    connectTimeoutMs: integer('PG_CONNECT_TIMEOUT_MS', env.PG_CONNECT_TIMEOUT_MS, 2000, 100, 60_000),
    statementTimeoutMs: integer('PG_STATEMENT_TIMEOUT_MS', env.PG_STATEMENT_TIMEOUT_MS, 5000, 100, 600_000),
    preparedStatements: prepared === 'on',
    pooler,
  };
}

export function loadConfig(env: Environment, flags: ConfigFlags = {}, cwd: string = process.cwd()): Config {
  const environment: KeyEnvironment = flags.sandbox === true || env.ACCOUNT_API_SANDBOX === '1' ? 'sandbox' : 'live';
  const databaseUrl =
    flags.databaseUrl ??
    (environment === 'sandbox'
      ? env.SANDBOX_DATABASE_URL || DEFAULT_SANDBOX_DATABASE_URL
      : env.DATABASE_URL || DEFAULT_DATABASE_URL);
  const database = parseDatabaseUrl(databaseUrl, cwd, flags.databaseUrl === undefined ? 'DATABASE_URL' : { flag: '--database-url' });
  // Only the obvious mistake (the same URL text); the environment each database records catches the rest (store/deployment.ts).
  if (environment === 'sandbox' && sameDatabase(database, env.DATABASE_URL || DEFAULT_DATABASE_URL, cwd)) {
    throw new ConfigError('The sandbox must not share the live database: set SANDBOX_DATABASE_URL (or --database-url) to another database.');
  }
  return checkAdminPort(checkWorkers({
    environment,
    host: listenHost(flagOr('--host', flags.host, 'HOST'), flags.host ?? env.HOST, '0.0.0.0'),
    // Its own port, so both can run side by side.
    port: integer(flagOr('--port', flags.port, 'PORT'), flags.port ?? env.PORT, environment === 'sandbox' ? 8081 : 8080, 0, 65535),
    workers: integer(flagOr('--workers', flags.workers, 'WORKERS'), flags.workers ?? env.WORKERS, 1, 1, 64),
    database,
    sqliteSynchronous: oneOf('SQLITE_SYNCHRONOUS', env.SQLITE_SYNCHRONOUS, ['full', 'normal'], 'full'),
    sqliteBusyTimeoutMs: integer('SQLITE_BUSY_TIMEOUT_MS', env.SQLITE_BUSY_TIMEOUT_MS, 5000, 0, 60_000),
    credentialCacheSize: integer('CREDENTIAL_CACHE_SIZE', env.CREDENTIAL_CACHE_SIZE, 10_000, 0, 10_000_000),
    credentialCacheMaxAgeMs: integer('CREDENTIAL_CACHE_MAX_AGE_MS', env.CREDENTIAL_CACHE_MAX_AGE_MS, 30_000, 0, 3_600_000),
    postgres: postgresSettings(env),
    storeFailFast: flags.storeFailFast === true || oneOf('STORE_FAIL_FAST', env.STORE_FAIL_FAST, ['0', '1'], '0') === '1',
    bodyLimitBytes: integer('BODY_LIMIT_BYTES', env.BODY_LIMIT_BYTES, 16 * 1024, 1024, 1024 * 1024),
    connections: connectionSettings(env),
    parameters: {
      maxParameters: integer('MAX_PARAMETERS', env.MAX_PARAMETERS, 20, 1, 10_000),
      maxParameterLength: integer('MAX_PARAMETER_LENGTH', env.MAX_PARAMETER_LENGTH, 1000, 1, 1024 * 1024),
    },
    maxEventLoopDelayMs: integer('MAX_EVENT_LOOP_DELAY_MS', env.MAX_EVENT_LOOP_DELAY_MS, 1000, 0, 60_000),
    shutdownTimeoutMs: integer('SHUTDOWN_TIMEOUT_MS', env.SHUTDOWN_TIMEOUT_MS, 10_000, 100, 600_000),
    redis: redisSettings(env),
    rateLimits: {
      windowMs: integer('RATE_LIMIT_WINDOW_MS', env.RATE_LIMIT_WINDOW_MS, 60_000, 1000, 86_400_000),
      perKey: integer('RATE_LIMIT_PER_KEY', env.RATE_LIMIT_PER_KEY, 600, 0, 1_000_000_000),
      perAddress: integer('RATE_LIMIT_PER_ADDRESS', env.RATE_LIMIT_PER_ADDRESS, 300, 0, 1_000_000_000),
      authFailuresPerAddress: integer('RATE_LIMIT_AUTH_FAILURES', env.RATE_LIMIT_AUTH_FAILURES, 20, 0, 1_000_000_000),
      maxWindows: integer('RATE_LIMIT_MAX_WINDOWS', env.RATE_LIMIT_MAX_WINDOWS, 20_000, 10, 10_000_000),
    },
    trustProxy: trustedProxies(env.TRUST_PROXY),
    logLevel: oneOf('LOG_LEVEL', env.LOG_LEVEL, LOG_LEVELS, 'info'),
    keyTouchIntervalMs: integer('KEY_TOUCH_INTERVAL_MS', env.KEY_TOUCH_INTERVAL_MS, 60_000, 0, 86_400_000),
    auditRetentionDays: integer('AUDIT_RETENTION_DAYS', env.AUDIT_RETENTION_DAYS, 365, 1, 36_500),
    keyUsage: {
      flushIntervalMs: integer('KEY_USAGE_FLUSH_MS', env.KEY_USAGE_FLUSH_MS, 10_000, 0, 3_600_000),
      retentionDays: integer('KEY_USAGE_RETENTION_DAYS', env.KEY_USAGE_RETENTION_DAYS, 90, 1, 36_500),
    },
    apiPrefix: '/api/v0',
    sandboxUrl: sandboxUrl(env.SANDBOX_URL),
    version: packageVersion,
    metrics: {
      port: env.METRICS_PORT ? integer('METRICS_PORT', env.METRICS_PORT, 0, 0, 65535) : null,
      host: env.METRICS_HOST || '127.0.0.1',
      token: metricsToken(env.METRICS_TOKEN),
    },
    admin: {
      port: env.ADMIN_PORT ? integer('ADMIN_PORT', env.ADMIN_PORT, 0, 0, 65535) : null,
      host: env.ADMIN_HOST || '127.0.0.1',
      perToken: integer('ADMIN_RATE_LIMIT_PER_TOKEN', env.ADMIN_RATE_LIMIT_PER_TOKEN, 600, 0, 1_000_000_000),
      consoleIdleMs: integer('CONSOLE_IDLE_MINUTES', env.CONSOLE_IDLE_MINUTES, 30, 1, 1440) * 60_000,
      consoleMaxMs: integer('CONSOLE_MAX_HOURS', env.CONSOLE_MAX_HOURS, 12, 1, 720) * 3_600_000,
    },
    corsOrigins: corsOrigins(env.CORS_ORIGINS),
    hstsMaxAgeSeconds: env.HSTS_MAX_AGE ? integer('HSTS_MAX_AGE', env.HSTS_MAX_AGE, 0, 0, 63_072_000) : null,
    tracing: tracingSettings(env),
    webhooks: webhookSettings(env),
  }));
}

const DURATION_UNITS_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `500ms`, `5s`, `30m`, `2h`, `5d`: a whole number and its unit. */
export function parseDurationMs(name: string, text: string): number {
  const match = /^(\d{1,9})(ms|s|m|h|d)$/.exec(text.trim());
  if (match === null) throw new ConfigError(`${name} must be durations such as 500ms, 5s, 30m, 2h or 5d; got '${text}'.`);
  return Number(match[1]) * DURATION_UNITS_MS[match[2] as keyof typeof DURATION_UNITS_MS];
}

/** 32 bytes in base64 (`openssl rand -base64 32`). */
function secretsKey(raw: string | undefined): Buffer | null {
  if (raw === undefined || raw === '') return null;
  const key = Buffer.from(raw, 'base64');
  if (key.length !== 32 || key.toString('base64') !== raw.trim()) {
    throw new ConfigError('WEBHOOK_SECRETS_KEY must be 32 random bytes in base64, such as `openssl rand -base64 32` prints.');
  }
  return key;
}

function webhookSettings(env: Environment): WebhookSettings {
  const schedule = env.WEBHOOK_RETRY_SCHEDULE
    ? env.WEBHOOK_RETRY_SCHEDULE.split(',').map((part) => parseDurationMs('WEBHOOK_RETRY_SCHEDULE', part))
    : DEFAULT_RETRY_SCHEDULE_MS;
  return {
    allowPrivate: oneOf('WEBHOOK_ALLOW_PRIVATE', env.WEBHOOK_ALLOW_PRIVATE, ['0', '1'], '0') === '1',
    retryScheduleMs: schedule,
    // Longer than an attempt may take, or a second worker could take a delivery still in flight.
    leaseMs: integer('WEBHOOK_LEASE_MS', env.WEBHOOK_LEASE_MS, 60_000, DELIVERY_TIMEOUT_MS + 1000, 3_600_000),
    // 0: another instance delivers.
    concurrency: integer('WEBHOOK_CONCURRENCY', env.WEBHOOK_CONCURRENCY, 16, 0, 1000),
    pollIntervalMs: integer('WEBHOOK_POLL_INTERVAL_MS', env.WEBHOOK_POLL_INTERVAL_MS, 1000, 10, 600_000),
    disableAfterMs: env.WEBHOOK_DISABLE_AFTER ? parseDurationMs('WEBHOOK_DISABLE_AFTER', env.WEBHOOK_DISABLE_AFTER) : 5 * DURATION_UNITS_MS.d,
    secretsKey: secretsKey(env.WEBHOOK_SECRETS_KEY),
  };
}

export interface CallConfig {
  /** Without /api/v0; undefined: the client's default. */
  readonly baseUrl: string | undefined;
  /** Only aapi_sandbox_ keys, and the sandbox's default URL. */
  readonly sandbox: boolean;
  /** Null: only /hello answers. */
  readonly credentials: { readonly username: string; readonly apiKey: string } | null;
  readonly timeoutMs: number;
  /** On 429, 503 (and GETs without an answer). 0 by default: a person sees a refusal at once. */
  readonly retries: number;
}

/** Each wins over its environment variable. */
export interface CallFlags {
  readonly baseUrl?: string | undefined;
  readonly username?: string | undefined;
  readonly apiKey?: string | undefined;
  readonly sandbox?: boolean | undefined;
  readonly timeoutMs?: string | undefined;
  readonly retries?: string | undefined;
}

export function loadCallConfig(env: Environment, flags: CallFlags = {}): CallConfig {
  const sandbox = flags.sandbox === true || env.ACCOUNT_API_SANDBOX === '1';
  // Two variables, so --sandbox switches servers without editing the environment.
  const urlVariable = sandbox ? 'ACCOUNT_API_SANDBOX_URL' : 'ACCOUNT_API_URL';
  const baseUrl = flags.baseUrl ?? (env[urlVariable] || undefined);
  if (baseUrl !== undefined && !/^https?:$/.test(URL.parse(baseUrl)?.protocol ?? '')) {
    throw new ConfigError(`The base URL (--base-url or ${urlVariable}) must be an http:// or https:// URL such as http://localhost:8080; got '${baseUrl}'.`, {
      flag: flags.baseUrl === undefined ? undefined : '--base-url',
    });
  }
  const username = flags.username ?? (env.ACCOUNT_API_USERNAME || undefined);
  const apiKey = flags.apiKey ?? (env.ACCOUNT_API_KEY || undefined);
  if ((username === undefined) !== (apiKey === undefined)) {
  // Whose mistake it is: the command line's, or the environment's.
    const [message, flag] =
      username === undefined
        ? ['An API key was given without a username: add --username (or ACCOUNT_API_USERNAME).', flags.apiKey === undefined ? undefined : '--api-key']
        : ['A username was given without an API key: add --api-key (or ACCOUNT_API_KEY).', flags.username === undefined ? undefined : '--username'];
    throw new ConfigError(message, { flag });
  }
  if (username?.includes(':')) {
    throw new ConfigError(`A username cannot contain ':' (HTTP Basic could not send it); got '${username}'.`, {
      flag: flags.username === undefined ? undefined : '--username',
    });
  }
  return {
    baseUrl,
    sandbox,
    credentials: username === undefined || apiKey === undefined ? null : { username, apiKey },
    timeoutMs: integer({ flag: '--timeout-ms' }, flags.timeoutMs, 10_000, 1, 600_000),
    retries: integer({ flag: '--retries' }, flags.retries, 0, 0, 10),
  };
}
