// docs/account-api.service: what the unit promises, read from the file, and systemd's own verdict on it (systemd-analyze).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as nodeTest from 'node:test';
import { SERVICE_NODE_FLAGS } from '../../bench/processes.ts';
import { loadConfig } from '../../src/config.ts';
import { requiring } from '../support/requiring.ts';
import { REPO_ROOT } from '../support/server-process.ts';

const UNIT = readFileSync(join(REPO_ROOT, 'docs/account-api.service'), 'utf8');
/** Where the unit expects the checkout; the copy given to systemd-analyze points at this one instead. */
const INSTALLED = '/opt/account-api';

/** Each key of [Service] with its values in order (a key may be given more than once). */
function serviceSettings(unit: string): Map<string, string[]> {
  const settings = new Map<string, string[]>();
  let section = '';
  for (const line of unit.split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const header = /^\[(\w+)\]$/.exec(trimmed);
    if (header !== null) {
      section = header[1]!;
      continue;
    }
    if (section !== 'Service') continue;
    const [key, ...value] = trimmed.split('=');
    settings.set(key!, [...(settings.get(key!) ?? []), value.join('=')]);
  }
  return settings;
}

const SERVICE = serviceSettings(UNIT);

function one(key: string): string {
  const values = SERVICE.get(key);
  assert.ok(values !== undefined && values.length === 1, `[Service] should set ${key}= once; it sets ${JSON.stringify(values)}`);
  return values[0]!;
}

/** The variables the unit sets with Environment=. */
function unitEnvironment(): NodeJS.ProcessEnv {
  return Object.fromEntries((SERVICE.get('Environment') ?? []).map((assignment) => assignment.split(/=(.*)/s).slice(0, 2)));
}

/** systemd's time spans as this unit may write them: 30, 30s, 2min, 1min 30s. */
function seconds(span: string): number {
  let total = 0;
  for (const [, amount, unit] of span.matchAll(/(\d+)\s*(ms|s|sec|min|m|h)?/g)) {
    total += Number(amount) * ({ ms: 0.001, s: 1, sec: 1, min: 60, m: 60, h: 3600 } as Record<string, number>)[unit ?? 's']!;
  }
  return total;
}

nodeTest.describe('what the unit promises', () => {
  const config = loadConfig(unitEnvironment(), {}, INSTALLED);

  nodeTest.test("runs the project's pinned Node on the package's bin, serving, as its own user, restarted on failure", () => {
    assert.equal(one('ExecStart'), `${INSTALLED}/node_modules/node/bin/node ${INSTALLED}/bin/account-api.js serve`);
    assert.equal(one('WorkingDirectory'), INSTALLED);
    assert.match(one('User'), /^[a-z][a-z-]*$/);
    assert.notEqual(one('User'), 'root');
    assert.equal(one('Restart'), 'on-failure');
    assert.ok(SERVICE.has('EnvironmentFile'), 'secrets belong in an EnvironmentFile, not in the unit');
  });

  nodeTest.test("gives Node npm start's flags through NODE_OPTIONS, which the EnvironmentFile can change", () => {
    assert.ok(SERVICE_NODE_FLAGS.length > 0);
    assert.equal(unitEnvironment().NODE_OPTIONS, SERVICE_NODE_FLAGS.join(' '), 'the young generation as npm start caps it (docs/operations.md, Memory)');
    // systemd: "Settings from these files override settings made with Environment=".
    assert.ok(SERVICE.has('EnvironmentFile'));
  });

  nodeTest.test('stops with SIGTERM, and waits longer than SHUTDOWN_TIMEOUT_MS before killing', () => {
    assert.equal(one('KillSignal'), 'SIGTERM');
    assert.equal(one('KillMode'), 'mixed', 'only the main process is signalled; it stops its --workers (docs/operations.md)');
    const stopSeconds = seconds(one('TimeoutStopSec'));
    assert.ok(
      stopSeconds * 1000 > config.shutdownTimeoutMs,
      `TimeoutStopSec (${stopSeconds} s) must be above SHUTDOWN_TIMEOUT_MS (${config.shutdownTimeoutMs} ms), or systemd kills a draining server`,
    );
  });

  nodeTest.test('may write only its data directory, and the database is in it', () => {
    assert.equal(one('ProtectSystem'), 'strict');
    const writable = one('ReadWritePaths');
    assert.equal(config.database.engine, 'sqlite');
    if (config.database.engine === 'sqlite') {
      assert.ok(config.database.path.startsWith(`${writable}/`), `the database ${config.database.path} must be under ReadWritePaths=${writable}`);
    }
    assert.equal(`/var/lib/${one('StateDirectory')}`, writable, 'StateDirectory= creates the writable directory for the service user');
  });

  nodeTest.test('gives the service no compile cache it could write: cached code there would run at every later start', () => {
    assert.equal(unitEnvironment().NODE_COMPILE_CACHE, undefined);
    assert.ok(!SERVICE.has('CacheDirectory'), 'a CacheDirectory= is writable by the service');
    assert.equal(one('ProtectSystem'), 'strict', 'the checkout, and its node_modules/.cache, read-only to the service');
  });

  nodeTest.test('is hardened, short of what Node cannot run under', () => {
    for (const [key, value] of [
      ['NoNewPrivileges', 'yes'],
      ['PrivateTmp', 'yes'],
      ['ProtectHome', 'yes'],
      ['PrivateDevices', 'yes'],
      ['RestrictSUIDSGID', 'yes'],
      ['CapabilityBoundingSet', ''],
    ] as const) {
      assert.equal(one(key), value, `${key}=${value}`);
    }
    assert.ok(!SERVICE.has('MemoryDenyWriteExecute'), "MemoryDenyWriteExecute would stop V8's compiler, and Node with it");
    assert.ok(Number(one('LimitNOFILE')) > config.connections.maxConnections, 'one descriptor per connection: LimitNOFILE above MAX_CONNECTIONS');
  });
});

function systemdAnalyzeSkipReason(): string | undefined {
  const probe = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
  if (probe.error === undefined && probe.status === 0) return undefined;
  const reason = `systemd-analyze is not installed (${probe.error?.message ?? probe.stderr.trim()}); Debian's package systemd provides it`;
  if (process.env.CI) throw new Error(`${reason}. CI must run these tests.`);
  return reason;
}

const { after, before, describe, test } = requiring(systemdAnalyzeSkipReason());

describe("systemd's verdict", () => {
  let dir: string;

  /** A copy of the unit whose programs and directories are this checkout's, since verify checks that ExecStart exists. */
  function localCopy(name: string, extra = ''): string {
    const unit = UNIT.replaceAll(`${INSTALLED}/node_modules/node/bin/node`, process.execPath).replaceAll(INSTALLED, REPO_ROOT) + extra;
    const path = join(dir, name);
    writeFileSync(path, unit);
    return path;
  }

  function analyze(args: readonly string[]) {
    return spawnSync('systemd-analyze', args, { encoding: 'utf8' });
  }

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'account-api-unit-'));
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  test('systemd-analyze verify accepts every line of the unit', () => {
    const result = analyze(['verify', localCopy('account-api.service')]);
    assert.equal(result.status, 0, `systemd-analyze verify failed:\n${result.stderr}${result.stdout}`);
    // verify exits 0 for unknown keys and bad values, with a warning: silence is the verdict.
    assert.equal(`${result.stderr}${result.stdout}`, '', `systemd-analyze verify warned:\n${result.stderr}${result.stdout}`);
  });

  test('systemd-analyze verify speaks up about a mistake here (so its silence above means something)', () => {
    const result = analyze(['verify', localCopy('mistaken.service', '\n[Service]\nKillSignall=SIGTERM\n')]);
    assert.match(`${result.stderr}${result.stdout}`, /Unknown key 'KillSignall'/);
  });

  test('systemd-analyze security rates its exposure 2.5 or lower (of 10)', () => {
    const result = analyze(['security', '--offline=true', '--threshold=25', localCopy('account-api.service')]);
    assert.equal(result.status, 0, `the unit is more exposed than 2.5:\n${result.stdout}${result.stderr}`);
  });
});
