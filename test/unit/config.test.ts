// Protects configuration parsing: defaults, environment overrides, flags over environment, sandbox isolation, clear errors.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { ConfigError, loadConfig } from '../../src/config.ts';

const CWD = '/srv/account-api';

function assertConfigError(load: () => unknown, variable: RegExp, what: string): void {
  assert.throws(
    load,
    (error: unknown) => {
      assert.ok(error instanceof ConfigError, `${what}: expected a ConfigError, got ${String(error)}`);
      assert.match(error.message, variable, `${what}: the message does not name the variable`);
      return true;
    },
    `${what} was accepted`,
  );
}

describe('defaults', () => {
  const config = loadConfig({}, {}, CWD);

  test('listen on port 8080 as a live server', () => {
    assert.equal(config.port, 8080);
    assert.equal(config.environment, 'live');
  });

  test('use the SQLite file ./data/account-api.db resolved against the working directory', () => {
    assert.deepEqual(config.database, { engine: 'sqlite', path: join(CWD, 'data', 'account-api.db') });
  });

  test('write with synchronous FULL', () => {
    assert.equal(config.sqliteSynchronous, 'full');
  });

  test('limit bodies to 16384 bytes', () => {
    assert.equal(config.bodyLimitBytes, 16384);
  });

  test('resolve the default database against the current directory when none is given', () => {
    assert.deepEqual(loadConfig({}).database, { engine: 'sqlite', path: join(process.cwd(), 'data', 'account-api.db') });
  });
});

describe('environment overrides', () => {
  test('PORT, HOST, LOG_LEVEL, BODY_LIMIT_BYTES and SQLITE_SYNCHRONOUS are read', () => {
    const config = loadConfig(
      { PORT: '3000', HOST: '127.0.0.1', LOG_LEVEL: 'debug', BODY_LIMIT_BYTES: '2048', SQLITE_SYNCHRONOUS: 'normal' },
      {},
      CWD,
    );
    assert.equal(config.port, 3000);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.logLevel, 'debug');
    assert.equal(config.bodyLimitBytes, 2048);
    assert.equal(config.sqliteSynchronous, 'normal');
  });

  test('PORT 0 asks for any free port', () => {
    assert.equal(loadConfig({ PORT: '0' }, {}, CWD).port, 0);
  });

  test('DATABASE_URL with sqlite: and a relative path resolves against the working directory', () => {
    assert.deepEqual(loadConfig({ DATABASE_URL: 'sqlite:./var/db.sqlite' }, {}, CWD).database, {
      engine: 'sqlite',
      path: join(CWD, 'var', 'db.sqlite'),
    });
  });

  test('DATABASE_URL with an absolute path keeps it', () => {
    assert.deepEqual(loadConfig({ DATABASE_URL: 'sqlite:/var/lib/account-api/live.db' }, {}, CWD).database, {
      engine: 'sqlite',
      path: '/var/lib/account-api/live.db',
    });
  });

  test('DATABASE_URL postgres:// selects PostgreSQL with the URL kept whole', () => {
    const url = 'postgres://api:secret@db.internal:5432/accounts';
    assert.deepEqual(loadConfig({ DATABASE_URL: url }, {}, CWD).database, { engine: 'postgres', url });
    const long = 'postgresql://db.internal/accounts';
    assert.deepEqual(loadConfig({ DATABASE_URL: long }, {}, CWD).database, { engine: 'postgres', url: long });
  });

  test('PG_POOLER=transaction turns named statements off, and refuses PG_PREPARED_STATEMENTS=on beside it', () => {
    const direct = loadConfig({ DATABASE_URL: 'postgres://db.internal/accounts' }, {}, CWD).postgres;
    assert.deepEqual([direct.pooler, direct.preparedStatements], ['none', true]);
    const pooled = loadConfig({ DATABASE_URL: 'postgres://pgbouncer.internal:6432/accounts', PG_POOLER: 'transaction' }, {}, CWD).postgres;
    assert.deepEqual([pooled.pooler, pooled.preparedStatements], ['transaction', false]);
    assert.equal(loadConfig({ PG_POOLER: 'transaction', PG_PREPARED_STATEMENTS: 'off' }, {}, CWD).postgres.preparedStatements, false);
    // Issue 36: through PgBouncer 1.18 a second instance died on `prepared statement "aapi_0" already exists`.
    assert.throws(
      () => loadConfig({ DATABASE_URL: 'postgres://pgbouncer.internal:6432/accounts', PG_POOLER: 'transaction', PG_PREPARED_STATEMENTS: 'on' }, {}, CWD),
      (error) => error instanceof ConfigError && /^PG_PREPARED_STATEMENTS=on cannot be used with PG_POOLER=transaction/.test(error.message),
    );
    assert.throws(() => loadConfig({ PG_POOLER: 'session' }, {}, CWD), /PG_POOLER must be one of none, transaction; got 'session'/);
  });

  test('empty variables fall back to the defaults', () => {
    const config = loadConfig({ PORT: '', DATABASE_URL: '', LOG_LEVEL: '' }, {}, CWD);
    assert.equal(config.port, 8080);
    assert.deepEqual(config.database, { engine: 'sqlite', path: join(CWD, 'data', 'account-api.db') });
  });
});

describe('flags', () => {
  test('win over the environment', () => {
    const config = loadConfig(
      { PORT: '3000', HOST: '127.0.0.1', DATABASE_URL: 'sqlite:./env.db' },
      { port: '4000', host: '::1', databaseUrl: 'sqlite:./flag.db' },
      CWD,
    );
    assert.equal(config.port, 4000, 'the --port flag did not win over PORT');
    assert.equal(config.host, '::1', 'the --host flag did not win over HOST');
    assert.deepEqual(config.database, { engine: 'sqlite', path: join(CWD, 'flag.db') }, 'the database flag did not win');
  });

  test('an invalid --port is refused like an invalid PORT', () => {
    assertConfigError(() => loadConfig({}, { port: 'eighty' }, CWD), /PORT/, "--port 'eighty'");
  });
});

describe('sandbox', () => {
  test('uses SANDBOX_DATABASE_URL, not DATABASE_URL', () => {
    const config = loadConfig({ DATABASE_URL: 'sqlite:./live.db', SANDBOX_DATABASE_URL: 'sqlite:./sandbox-x.db' }, { sandbox: true }, CWD);
    assert.equal(config.environment, 'sandbox');
    assert.deepEqual(config.database, { engine: 'sqlite', path: join(CWD, 'sandbox-x.db') });
  });

  test('defaults to its own database file when SANDBOX_DATABASE_URL is unset', () => {
    const config = loadConfig({ DATABASE_URL: 'sqlite:./live.db' }, { sandbox: true }, CWD);
    assert.equal(config.environment, 'sandbox');
    assert.deepEqual(config.database, { engine: 'sqlite', path: join(CWD, 'data', 'sandbox.db') });
    assert.notDeepEqual(config.database, loadConfig({}, {}, CWD).database, 'the default sandbox database is the live one');
  });

  test('refuses to share the live DATABASE_URL', () => {
    assertConfigError(
      () => loadConfig({ DATABASE_URL: 'sqlite:./shared.db', SANDBOX_DATABASE_URL: 'sqlite:./shared.db' }, { sandbox: true }, CWD),
      /SANDBOX_DATABASE_URL/,
      'a sandbox on the live database',
    );
  });

  test('refuses the live database even when spelled differently', () => {
    assertConfigError(
      () =>
        loadConfig(
          { DATABASE_URL: `sqlite:${join(CWD, 'data', 'shared.db')}`, SANDBOX_DATABASE_URL: 'file:./data/shared.db' },
          { sandbox: true },
          CWD,
        ),
      /SANDBOX_DATABASE_URL/,
      'a sandbox on the live database (absolute vs relative spelling)',
    );
  });

  test('refuses when the live database is the default sandbox file', () => {
    assertConfigError(
      () => loadConfig({ DATABASE_URL: 'sqlite:./data/sandbox.db' }, { sandbox: true }, CWD),
      /SANDBOX_DATABASE_URL/,
      'a sandbox whose default file is the live database',
    );
  });

  test('refuses the live database given with --database-url, and the default live database when DATABASE_URL is unset', () => {
    assertConfigError(
      () => loadConfig({ DATABASE_URL: `sqlite:${join(CWD, 'live.db')}` }, { sandbox: true, databaseUrl: 'sqlite:./live.db' }, CWD),
      /SANDBOX_DATABASE_URL/,
      'a sandbox given the live database with --database-url',
    );
    assertConfigError(
      () => loadConfig({}, { sandbox: true, databaseUrl: 'sqlite:./data/account-api.db' }, CWD),
      /SANDBOX_DATABASE_URL/,
      'a sandbox on the default live database',
    );
  });

  test('lets two in-memory databases be, and ignores a live URL the sandbox does not use', () => {
    const memory = loadConfig({ DATABASE_URL: 'sqlite::memory:' }, { sandbox: true, databaseUrl: 'sqlite::memory:' }, CWD);
    assert.equal(memory.database.engine === 'sqlite' && memory.database.path, ':memory:');
    const config = loadConfig({ DATABASE_URL: 'mysql://nope' }, { sandbox: true, databaseUrl: 'sqlite:./sandbox-x.db' }, CWD);
    assert.deepEqual(config.database, { engine: 'sqlite', path: join(CWD, 'sandbox-x.db') });
  });

  test('a live server is not affected by SANDBOX_DATABASE_URL', () => {
    const config = loadConfig({ SANDBOX_DATABASE_URL: 'sqlite:./sandbox-x.db' }, {}, CWD);
    assert.equal(config.environment, 'live');
    assert.deepEqual(config.database, { engine: 'sqlite', path: join(CWD, 'data', 'account-api.db') });
  });
});

describe('invalid values', () => {
  test('an invalid PORT is a ConfigError naming PORT', () => {
    for (const port of ['abc', '70000', '65536', '-1', '80.5', '8080x']) {
      assertConfigError(() => loadConfig({ PORT: port }, {}, CWD), /PORT/, `PORT '${port}'`);
    }
  });

  test('an unknown LOG_LEVEL is a ConfigError naming LOG_LEVEL', () => {
    assertConfigError(() => loadConfig({ LOG_LEVEL: 'loud' }, {}, CWD), /LOG_LEVEL/, "LOG_LEVEL 'loud'");
  });

  test('an unknown database scheme is a ConfigError naming DATABASE_URL', () => {
    for (const url of ['mysql://db/accounts', 'redis://cache:6379', 'mongodb://db/x']) {
      assertConfigError(() => loadConfig({ DATABASE_URL: url }, {}, CWD), /DATABASE_URL/, `DATABASE_URL '${url}'`);
    }
  });

  test('sqlite: with no path is a ConfigError naming DATABASE_URL', () => {
    assertConfigError(() => loadConfig({ DATABASE_URL: 'sqlite:' }, {}, CWD), /DATABASE_URL/, "DATABASE_URL 'sqlite:'");
  });

  test('an out-of-range BODY_LIMIT_BYTES or unknown SQLITE_SYNCHRONOUS is a ConfigError naming it', () => {
    assertConfigError(() => loadConfig({ BODY_LIMIT_BYTES: 'lots' }, {}, CWD), /BODY_LIMIT_BYTES/, "BODY_LIMIT_BYTES 'lots'");
    assertConfigError(() => loadConfig({ SQLITE_SYNCHRONOUS: 'off' }, {}, CWD), /SQLITE_SYNCHRONOUS/, "SQLITE_SYNCHRONOUS 'off'");
  });
});

describe('signals, headers and CORS', () => {
  test('by default: no metrics listener, no metrics token, CORS off, no HSTS', () => {
    const config = loadConfig({}, {}, CWD);
    assert.deepEqual(config.metrics, { port: null, host: '127.0.0.1', token: null });
    assert.deepEqual(config.corsOrigins, []);
    assert.equal(config.hstsMaxAgeSeconds, null);
  });

  test('METRICS_PORT, METRICS_HOST, METRICS_TOKEN, CORS_ORIGINS and HSTS_MAX_AGE are read', () => {
    const config = loadConfig(
      {
        METRICS_PORT: '9464',
        METRICS_HOST: '0.0.0.0',
        METRICS_TOKEN: 'a-long-enough-token-1234',
        CORS_ORIGINS: 'https://app.example.com, http://localhost:3000',
        HSTS_MAX_AGE: '31536000',
      },
      {},
      CWD,
    );
    assert.deepEqual(config.metrics, { port: 9464, host: '0.0.0.0', token: 'a-long-enough-token-1234' });
    assert.deepEqual(config.corsOrigins, ['https://app.example.com', 'http://localhost:3000']);
    assert.equal(config.hstsMaxAgeSeconds, 31536000);
  });

  test('a short METRICS_TOKEN, a CORS origin with a path or a wildcard, or a bad METRICS_PORT is a ConfigError naming it', () => {
    assertConfigError(() => loadConfig({ METRICS_TOKEN: 'short' }, {}, CWD), /METRICS_TOKEN/, "METRICS_TOKEN 'short'");
    assertConfigError(() => loadConfig({ METRICS_TOKEN: 'has a space in the middle' }, {}, CWD), /METRICS_TOKEN/, 'METRICS_TOKEN with spaces');
    for (const origins of ['*', 'https://app.example.com/', 'https://app.example.com/path', 'app.example.com', 'https://*.example.com']) {
      assertConfigError(() => loadConfig({ CORS_ORIGINS: origins }, {}, CWD), /CORS_ORIGINS/, `CORS_ORIGINS '${origins}'`);
    }
    assertConfigError(() => loadConfig({ METRICS_PORT: '70000' }, {}, CWD), /METRICS_PORT/, "METRICS_PORT '70000'");
    assertConfigError(() => loadConfig({ HSTS_MAX_AGE: 'forever' }, {}, CWD), /HSTS_MAX_AGE/, "HSTS_MAX_AGE 'forever'");
  });

  test('the admin API is off without ADMIN_PORT, on 127.0.0.1 unless ADMIN_HOST says otherwise, whatever HOST is', () => {
    const sessions = { consoleIdleMs: 30 * 60_000, consoleMaxMs: 12 * 3_600_000 };
    assert.deepEqual(loadConfig({ HOST: '0.0.0.0' }, {}, CWD).admin, { port: null, host: '127.0.0.1', perToken: 600, ...sessions });
    assert.deepEqual(loadConfig({ ADMIN_PORT: '8082', HOST: '0.0.0.0' }, {}, CWD).admin, { port: 8082, host: '127.0.0.1', perToken: 600, ...sessions });
    assert.deepEqual(loadConfig({ ADMIN_PORT: '8082', ADMIN_HOST: '10.0.0.5', ADMIN_RATE_LIMIT_PER_TOKEN: '0' }, {}, CWD).admin, {
      port: 8082,
      host: '10.0.0.5',
      perToken: 0,
      ...sessions,
    });
    assert.equal(loadConfig({ ADMIN_PORT: '' }, {}, CWD).admin.port, null, 'an empty ADMIN_PORT is unset (serve --workers relies on it)');
  });

  test("the console's sessions last CONSOLE_IDLE_MINUTES idle and CONSOLE_MAX_HOURS in all, whole numbers in range", () => {
    const admin = loadConfig({ CONSOLE_IDLE_MINUTES: '5', CONSOLE_MAX_HOURS: '1' }, {}, CWD).admin;
    assert.equal(admin.consoleIdleMs, 300_000);
    assert.equal(admin.consoleMaxMs, 3_600_000);
    assert.throws(() => loadConfig({ CONSOLE_IDLE_MINUTES: '0' }, {}, CWD), /CONSOLE_IDLE_MINUTES must be a whole number from 1 to 1440/);
    assert.throws(() => loadConfig({ CONSOLE_MAX_HOURS: '1.5' }, {}, CWD), /CONSOLE_MAX_HOURS must be a whole number from 1 to 720/);
  });

  test('ADMIN_PORT is never the public port nor the metrics port', () => {
    assertConfigError(() => loadConfig({ ADMIN_PORT: '8080' }, {}, CWD), /ADMIN_PORT must differ from the public port/, 'ADMIN_PORT = PORT');
    assertConfigError(() => loadConfig({ ADMIN_PORT: '9000' }, { port: '9000' }, CWD), /ADMIN_PORT/, 'ADMIN_PORT = --port');
    assertConfigError(() => loadConfig({ ADMIN_PORT: '9464', METRICS_PORT: '9464' }, {}, CWD), /METRICS_PORT/, 'ADMIN_PORT = METRICS_PORT');
    assertConfigError(() => loadConfig({ ADMIN_PORT: 'admin' }, {}, CWD), /ADMIN_PORT/, "ADMIN_PORT 'admin'");
  });
});

describe('limits', () => {
  test('default to the documented values', () => {
    const config = loadConfig({}, {}, CWD);
    assert.deepEqual(config.connections, {
      requestTimeoutMs: 10_000,
      headersTimeoutMs: 5000,
      keepAliveTimeoutMs: 5000,
      maxConnections: 10_000,
      maxHeaderBytes: 16_384,
    });
    assert.deepEqual(config.parameters, { maxParameters: 20, maxParameterLength: 1000 });
    assert.equal(config.maxEventLoopDelayMs, 1000);
    assert.equal(config.shutdownTimeoutMs, 10_000);
  });

  test('are read from the environment, and MAX_EVENT_LOOP_DELAY_MS=0 turns shedding off', () => {
    const config = loadConfig(
      {
        REQUEST_TIMEOUT_MS: '4000',
        HEADERS_TIMEOUT_MS: '2000',
        KEEP_ALIVE_TIMEOUT_MS: '1000',
        MAX_CONNECTIONS: '50',
        MAX_HEADER_BYTES: '8192',
        MAX_PARAMETERS: '5',
        MAX_PARAMETER_LENGTH: '10',
        MAX_EVENT_LOOP_DELAY_MS: '0',
        SHUTDOWN_TIMEOUT_MS: '3000',
      },
      {},
      CWD,
    );
    assert.deepEqual(config.connections, {
      requestTimeoutMs: 4000,
      headersTimeoutMs: 2000,
      keepAliveTimeoutMs: 1000,
      maxConnections: 50,
      maxHeaderBytes: 8192,
    });
    assert.deepEqual(config.parameters, { maxParameters: 5, maxParameterLength: 10 });
    assert.equal(config.maxEventLoopDelayMs, 0);
    assert.equal(config.shutdownTimeoutMs, 3000);
  });

  test('a headers timeout longer than the request timeout, or a value out of range, is a ConfigError naming it', () => {
    assertConfigError(
      () => loadConfig({ HEADERS_TIMEOUT_MS: '20000' }, {}, CWD),
      /HEADERS_TIMEOUT_MS.*REQUEST_TIMEOUT_MS/,
      'HEADERS_TIMEOUT_MS over the default REQUEST_TIMEOUT_MS',
    );
    for (const [name, value] of [
      ['REQUEST_TIMEOUT_MS', '0'],
      ['KEEP_ALIVE_TIMEOUT_MS', 'soon'],
      ['MAX_CONNECTIONS', '0'],
      ['MAX_HEADER_BYTES', '100'],
      ['MAX_PARAMETERS', '-1'],
      ['MAX_PARAMETER_LENGTH', '1.5'],
      ['MAX_EVENT_LOOP_DELAY_MS', '-5'],
      ['SHUTDOWN_TIMEOUT_MS', '0'],
    ] as const) {
      assertConfigError(() => loadConfig({ [name]: value }, {}, CWD), new RegExp(name), `${name} '${value}'`);
    }
  });
});

describe('workers', () => {
  test('one process by default; WORKERS or --workers (which wins) asks for more', () => {
    assert.equal(loadConfig({}, {}, CWD).workers, 1);
    assert.equal(loadConfig({ WORKERS: '2' }, {}, CWD).workers, 2);
    assert.equal(loadConfig({ WORKERS: '2' }, { workers: '4' }, CWD).workers, 4);
  });

  test('a count out of range, or what several processes cannot share, is a ConfigError naming it', () => {
    for (const value of ['0', '65', 'two', '1.5']) {
      assertConfigError(() => loadConfig({ WORKERS: value }, {}, CWD), /WORKERS/, `WORKERS '${value}'`);
    }
    assertConfigError(() => loadConfig({ DATABASE_URL: 'sqlite::memory:' }, { workers: '2' }, CWD), /WORKERS.*memory/, 'workers on :memory:');
    assertConfigError(
      () => loadConfig({ METRICS_TOKEN: 'a'.repeat(32) }, { workers: '2' }, CWD),
      /METRICS_TOKEN.*METRICS_PORT/,
      'METRICS_TOKEN with workers',
    );
    assert.equal(loadConfig({ METRICS_PORT: '9464' }, { workers: '2' }, CWD).metrics.port, 9464, 'METRICS_PORT is served by the primary');
  });
});

describe('TRUST_PROXY', () => {
  const trust = (value: string) => loadConfig({ TRUST_PROXY: value }).trustProxy;

  test('unset, empty or false trusts nobody', () => {
    assert.equal(loadConfig({}).trustProxy, false);
    assert.equal(trust(''), false);
    assert.equal(trust('false'), false);
  });

  test('takes addresses, CIDR ranges and the names proxy-addr knows, as written', () => {
    assert.deepEqual(trust('10.0.0.5'), ['10.0.0.5']);
    assert.deepEqual(trust('10.0.0.0/8, 192.168.1.1,fd00::/8 , ::1'), ['10.0.0.0/8', '192.168.1.1', 'fd00::/8', '::1']);
    assert.deepEqual(trust('loopback,LinkLocal,uniquelocal'), ['loopback', 'linklocal', 'uniquelocal']);
  });

  test('a whole number is a hop count, not the address 0.0.0.1', () => {
    assert.equal(trust('1'), 1);
    assert.equal(trust('2'), 2);
  });

  test('refuses what would be misread, naming the variable', () => {
    for (const value of ['true', 'TRUE', '0', '101', 'proxy.example.com', '10.0.0.0/33', 'fd00::/129', '10.0.0.1/8/8', '10.0.0', '1,10.0.0.1', '*']) {
      assert.throws(
        () => trust(value),
        (error: unknown) => error instanceof ConfigError && error.message.includes('TRUST_PROXY'),
        `TRUST_PROXY=${value} was accepted`,
      );
    }
  });
});

describe('waiting for the database at start', () => {
  test('serve waits by default; STORE_FAIL_FAST=1 or --store-fail-fast exits instead', () => {
    assert.equal(loadConfig({}, {}, CWD).storeFailFast, false);
    assert.equal(loadConfig({ STORE_FAIL_FAST: '0' }, {}, CWD).storeFailFast, false);
    assert.equal(loadConfig({ STORE_FAIL_FAST: '1' }, {}, CWD).storeFailFast, true);
    assert.equal(loadConfig({}, { storeFailFast: true }, CWD).storeFailFast, true);
  });

  test('a STORE_FAIL_FAST other than 0 or 1 is a ConfigError naming it, not silently ignored', () => {
    assertConfigError(() => loadConfig({ STORE_FAIL_FAST: 'yes' }, {}, CWD), /STORE_FAIL_FAST/, 'STORE_FAIL_FAST=yes');
  });
});

describe('TRUST_PROXY ranges too wide to name proxies', () => {
  test('are refused with a ConfigError, IPv4-mapped IPv6 ranges included, /0 too', () => {
    for (const value of ['0.0.0.0/0', '0.0.0.0/1,128.0.0.0/1', '10.0.0.0/7', '::/0', '::/1,8000::/1', '2001::/15', '::ffff:0.0.0.0/96', '::ffff:0:0/100']) {
      assert.throws(
        () => loadConfig({ TRUST_PROXY: value }),
        (error: unknown) => error instanceof ConfigError && error.message.includes('TRUST_PROXY'),
        `TRUST_PROXY=${value} was accepted`,
      );
    }
  });

  test('while a network of proxies is fine', () => {
    assert.deepEqual(loadConfig({ TRUST_PROXY: '10.0.0.0/8,fd00::/16,::ffff:10.0.0.0/104' }).trustProxy, ['10.0.0.0/8', 'fd00::/16', '::ffff:10.0.0.0/104']);
  });
});
