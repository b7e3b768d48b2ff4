// Environment variables and command-line flags, parsed once into one typed, validated configuration.
import { isAbsolute, resolve } from 'node:path';
import type { KeyEnvironment } from './domain/api-keys.ts';

export type DatabaseTarget = { readonly engine: 'sqlite'; readonly path: string } | { readonly engine: 'postgres'; readonly url: string };

export interface Config {
  readonly environment: KeyEnvironment;
  readonly host: string;
  readonly port: number;
  readonly database: DatabaseTarget;
  readonly sqliteSynchronous: 'full' | 'normal';
  readonly sqliteBusyTimeoutMs: number;
  readonly postgres: PostgresSettings;
  readonly bodyLimitBytes: number;
  readonly redis: RedisSettings | null;
  readonly rateLimits: RateLimitSettings;
  /** Proxies whose X-Forwarded-For is believed (addresses or CIDR ranges); empty: the socket address is the client. */
  readonly trustProxy: readonly string[];
  readonly logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  readonly keyTouchIntervalMs: number;
  readonly apiPrefix: string;
}

export interface PostgresSettings {
  /** Connections per instance; N instances hold up to N times this many. */
  readonly poolMax: number;
  /** How long a request waits for a connection before it is answered 503. */
  readonly connectTimeoutMs: number;
  /** Longest a single statement may run before PostgreSQL cancels it. */
  readonly statementTimeoutMs: number;
}

export interface RedisSettings {
  readonly url: string;
  /** Prefix of every key this service writes, so one Redis can serve several deployments. */
  readonly keyPrefix: string;
}

/** Requests allowed per window; 0 turns that limit off. */
export interface RateLimitSettings {
  readonly windowMs: number;
  /** Per API key, on the private endpoints. */
  readonly perKey: number;
  /** Per client address, on the public endpoints. */
  readonly perAddress: number;
  /** Failed authentications per client address, on every endpoint: a guesser is stopped, the account holder is not. */
  readonly authFailuresPerAddress: number;
}

/** Values given on the command line win over the environment. */
export interface ConfigFlags {
  readonly sandbox?: boolean;
  readonly host?: string;
  readonly port?: string;
  readonly databaseUrl?: string;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export const DEFAULT_DATABASE_URL = 'sqlite:./data/account-api.db';
export const DEFAULT_SANDBOX_DATABASE_URL = 'sqlite:./data/sandbox.db';
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

function integer(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}; got '${raw}'.`);
  }
  return value;
}

function oneOf<T extends string>(name: string, raw: string | undefined, allowed: readonly T[], fallback: T): T {
  if (raw === undefined || raw === '') return fallback;
  const value = raw.toLowerCase() as T;
  if (!allowed.includes(value)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}; got '${raw}'.`);
  return value;
}

/** `sqlite:PATH`, `sqlite://PATH`, `file:PATH` or a bare path select SQLite; `postgres://...` selects PostgreSQL. */
export function parseDatabaseUrl(url: string, cwd: string): DatabaseTarget {
  if (/^postgres(ql)?:\/\//i.test(url)) return { engine: 'postgres', url };
  const match = /^(?:sqlite|file):(?:\/\/)?(.*)$/i.exec(url);
  const path = match === null ? url : match[1]!;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url) && match === null) {
    throw new ConfigError(`DATABASE_URL '${url}' names an engine this server does not know; use sqlite:PATH or postgres://...`);
  }
  if (path === '') throw new ConfigError('DATABASE_URL names no SQLite file; use e.g. sqlite:./data/account-api.db.');
  return { engine: 'sqlite', path: path === ':memory:' || isAbsolute(path) ? path : resolve(cwd, path) };
}

function redisUrl(url: string): string {
  if (!/^rediss?:\/\//i.test(url)) throw new ConfigError(`REDIS_URL must start with redis:// or rediss://; got '${url}'.`);
  return url;
}

export function loadConfig(env: NodeJS.ProcessEnv, flags: ConfigFlags = {}, cwd: string = process.cwd()): Config {
  const environment: KeyEnvironment = flags.sandbox === true || env.ACCOUNT_API_SANDBOX === '1' ? 'sandbox' : 'live';
  const databaseUrl =
    flags.databaseUrl ??
    (environment === 'sandbox'
      ? env.SANDBOX_DATABASE_URL || DEFAULT_SANDBOX_DATABASE_URL
      : env.DATABASE_URL || DEFAULT_DATABASE_URL);
  const database = parseDatabaseUrl(databaseUrl, cwd);
  if (environment === 'sandbox' && flags.databaseUrl === undefined && env.DATABASE_URL) {
    const live = parseDatabaseUrl(env.DATABASE_URL, cwd);
    if (JSON.stringify(live) === JSON.stringify(database)) {
      throw new ConfigError('The sandbox must not share the live database: set SANDBOX_DATABASE_URL to another database.');
    }
  }
  return {
    environment,
    host: flags.host ?? env.HOST ?? '0.0.0.0',
    // The sandbox defaults to its own port so both can run side by side on one machine.
    port: integer('PORT', flags.port ?? env.PORT, environment === 'sandbox' ? 8081 : 8080, 0, 65535),
    database,
    sqliteSynchronous: oneOf('SQLITE_SYNCHRONOUS', env.SQLITE_SYNCHRONOUS, ['full', 'normal'], 'full'),
    sqliteBusyTimeoutMs: integer('SQLITE_BUSY_TIMEOUT_MS', env.SQLITE_BUSY_TIMEOUT_MS, 5000, 0, 60_000),
    postgres: {
      poolMax: integer('PG_POOL_MAX', env.PG_POOL_MAX, 10, 1, 1000),
      connectTimeoutMs: integer('PG_CONNECT_TIMEOUT_MS', env.PG_CONNECT_TIMEOUT_MS, 2000, 100, 60_000),
      statementTimeoutMs: integer('PG_STATEMENT_TIMEOUT_MS', env.PG_STATEMENT_TIMEOUT_MS, 5000, 100, 600_000),
    },
    bodyLimitBytes: integer('BODY_LIMIT_BYTES', env.BODY_LIMIT_BYTES, 16 * 1024, 1024, 1024 * 1024),
    redis: env.REDIS_URL ? { url: redisUrl(env.REDIS_URL), keyPrefix: env.REDIS_KEY_PREFIX ?? 'account-api:' } : null,
    rateLimits: {
      windowMs: integer('RATE_LIMIT_WINDOW_MS', env.RATE_LIMIT_WINDOW_MS, 60_000, 1000, 86_400_000),
      perKey: integer('RATE_LIMIT_PER_KEY', env.RATE_LIMIT_PER_KEY, 600, 0, 1_000_000_000),
      perAddress: integer('RATE_LIMIT_PER_ADDRESS', env.RATE_LIMIT_PER_ADDRESS, 300, 0, 1_000_000_000),
      authFailuresPerAddress: integer('RATE_LIMIT_AUTH_FAILURES', env.RATE_LIMIT_AUTH_FAILURES, 20, 0, 1_000_000_000),
    },
    trustProxy: (env.TRUST_PROXY ?? '')
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry !== ''),
    logLevel: oneOf('LOG_LEVEL', env.LOG_LEVEL, LOG_LEVELS, 'info'),
    keyTouchIntervalMs: integer('KEY_TOUCH_INTERVAL_MS', env.KEY_TOUCH_INTERVAL_MS, 60_000, 0, 86_400_000),
    apiPrefix: '/api/v0',
  };
}
