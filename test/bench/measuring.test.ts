// The bench's measuring parts that need no server: reading CPU time from /proc, the wrk script's strings and results, and the
// Node flags the service is started with.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clockTicksPerSecond, cpuBetween, readCpu, type CpuReading } from '../../bench/cpu-time.ts';
import { parseOptions } from '../../bench/options.ts';
import { residentByKind, residentByKindOf, residentMemory, SERVICE_NODE_FLAGS, startScriptNodeFlags } from '../../bench/processes.ts';
import { luaString, parseWrkOutput, wrkScript } from '../../bench/wrk.ts';

const tick = 1e9 / clockTicksPerSecond();
const reading = (schedstatNs: number | null, ticks: number, pids = [1]): CpuReading => ({ pids, schedstatNs, userTicks: ticks, systemTicks: 0 });

test("reads this process's CPU time in nanoseconds, at least what getrusage counts for its main thread", () => {
  const before = readCpu(process.pid, (pid) => [pid]);
  // This thread's own time (RUSAGE_THREAD): the whole process's would also count threads that ended meanwhile, whose
  // schedstat went with them (under CI's load that was once 46 ms against 31).
  const usage = process.threadCpuUsage();
  // 30 ms on CPU, however long that takes on a busy machine.
  while (process.threadCpuUsage(usage).user < 30_000);
  const spent = process.threadCpuUsage(usage);
  const rusageNs = (spent.user + spent.system) * 1000;
  const used = cpuBetween(before, readCpu(process.pid, (pid) => [pid]));
  assert.equal(used.source, 'schedstat', 'this kernel has /proc/PID/task/*/schedstat');
  assert.ok(used.ns >= rusageNs * 0.9, `${rusageNs / 1e6} ms on CPU by getrusage counted as ${used.ns / 1e6} ms`);
});

test('takes schedstat when the ticks agree with it, within their rounding', () => {
  assert.deepEqual(cpuBetween(reading(0, 0), reading(25e6, 3)), { ns: 25e6, source: 'schedstat', systemShare: 0 });
});

test("falls back to the ticks when a thread ended between the readings and took its schedstat with it", () => {
  const used = cpuBetween(reading(0, 0), reading(10e6, 50));
  assert.deepEqual(used, { ns: 50 * tick, source: 'stat', systemShare: 0 });
});

test('falls back to the ticks when a worker process came or went', () => {
  assert.equal(cpuBetween(reading(0, 0, [1, 2]), reading(25e6, 3, [1])).source, 'stat');
});

test('a Lua string literal keeps the exact bytes: quotes, backslashes, control characters and UTF-8', () => {
  assert.equal(luaString('a"b\\c\n\u00e9'), '"a\\"b\\\\c\\010\\195\\169"');
  assert.equal(luaString('{"x":1}'), '"{\\"x\\":1}"');
});

test('the script checks bodies only when asked, and alternates bodies only when there are several', () => {
  const load = { url: 'http://127.0.0.1:1/api/v0/user?x=1', method: 'POST', headers: { a: 'b' }, bodies: ['n=1', 'n=2'], expectedStatus: 200 };
  const checked = wrkScript({ ...load, allowedBodies: ['ok'] }, 'label');
  assert.match(checked, /^local check = true$/m);
  assert.match(checked, /^local path = "\/api\/v0\/user\?x=1"$/m);
  assert.match(checked, /function request\(\)/);
  assert.match(wrkScript({ ...load, allowedBodies: null }, 'label'), /^local check = false$/m);
});

test("reads wrk's result line: counts, microseconds turned to milliseconds, errors, wrong answers and its CPU ticks", () => {
  const output = 'Running 1s test\nBENCH-WRK-RESULT 1000 2000000 250.0 1500.0 0 1 2 3 4 5 30 20\nBENCH-WRK-FIRST-WRONG 500 {"status":"error"}\n';
  const result = parseWrkOutput(output, 100);
  assert.deepEqual(result, {
    requests: 1000,
    durationSeconds: 2,
    p50Ms: 0.25,
    p99Ms: 1.5,
    errors: { connect: 0, read: 1, write: 2, status: 3, timeout: 4 },
    wrong: 5,
    firstWrong: '500 {"status":"error"}',
    cpuSeconds: 0.5,
  });
  assert.throws(() => parseWrkOutput('unable to connect', 100), /wrk printed no result/);
});

test("reads the Node flags of npm start's command, and refuses a command it cannot read exactly", () => {
  assert.deepEqual(startScriptNodeFlags('node --max-semi-space-size=32 --no-warnings src/main.ts serve'), ['--max-semi-space-size=32', '--no-warnings']);
  assert.deepEqual(startScriptNodeFlags('node src/main.ts serve'), []);
  for (const script of [
    'node --max-semi-space-size=32 src/main.ts serve --sandbox', // not the command the bench starts
    'NODE_OPTIONS=--x node src/main.ts serve',
    'node --max-semi-space-size="32" src/main.ts serve', // quoting: the shell would read it otherwise
    'node --max-semi-space-size=32 $EXTRA src/main.ts serve',
    'node  --max-semi-space-size=32 src/main.ts serve',
    'node --max-semi-space-size=32 bin/account-api.js serve',
  ]) {
    assert.throws(() => startScriptNodeFlags(script), /npm start should be/, script);
  }
});

test("starts the service with npm start's Node flags, then the run's own, which V8 lets win", () => {
  assert.deepEqual(SERVICE_NODE_FLAGS, ['--max-semi-space-size=32'], "package.json's start script");
  const plain = parseOptions([], {}, '/tmp');
  assert.ok(!('usage' in plain));
  assert.deepEqual(plain.serviceNodeArgs, SERVICE_NODE_FLAGS);
  const more = parseOptions(['--service-node-arg=--max-semi-space-size=4'], {}, '/tmp');
  assert.ok(!('usage' in more));
  assert.deepEqual(more.serviceNodeArgs, [...SERVICE_NODE_FLAGS, '--max-semi-space-size=4']);
});

test('--service-env sets NAME=VALUE in the service\'s environment, and refuses anything else', () => {
  const parsed = parseOptions(['--service-env=KEY_USAGE_FLUSH_MS=0', '--service-env', 'LOG_LEVEL=a=b'], {}, '/tmp');
  assert.ok(!('usage' in parsed));
  assert.deepEqual(parsed.serviceEnv, { KEY_USAGE_FLUSH_MS: '0', LOG_LEVEL: 'a=b' });
  for (const wrong of ['--service-env=lower=1', '--service-env=NOVALUE']) {
    const refused = parseOptions([wrong], {}, '/tmp');
    assert.ok('usage' in refused && /--service-env takes NAME=VALUE/.test(refused.usage), `${wrong} was taken`);
  }
});

/** One region of /proc/PID/smaps: its head line and the Rss line (the others are left out; the parser skips them anyway). */
const region = (start: number, end: number, perms: string, path: string, rssKiB: number) =>
  `${start.toString(16)}-${end.toString(16)} ${perms} 00000000 00:00 0 ${path}\nSize: ${(end - start) / 1024} kB\nRss: ${rssKiB} kB\n`;

test("splits smaps by kind: files, malloc's main heap, other threads' 64 MiB arenas, and every other anonymous region", () => {
  const MiB = 1024 * 1024;
  const arena = 0x7f0000000000; // a multiple of 64 MiB
  const smaps = [
    region(0x400000, 0x400000 + 100 * MiB, 'r-xp', '/usr/bin/node', 50_000),
    region(0x6000000, 0x6000000 + 20 * MiB, 'rw-p', '[heap]', 10_000),
    // An arena in use for its first 3 MiB, the rest of its 64 MiB reserved and inaccessible.
    region(arena, arena + 3 * MiB, 'rw-p', '', 3_000),
    region(arena + 3 * MiB, arena + 64 * MiB, '---p', '', 0),
    // An arena grown to the whole of its 64 MiB.
    region(arena + 64 * MiB, arena + 128 * MiB, 'rw-p', '', 2_000),
    // V8's pages: 256 KiB each, one of them at a 64 MiB boundary but followed by another page, not by a reservation.
    region(arena + 128 * MiB, arena + 128 * MiB + 256 * 1024, 'rw-p', '', 256),
    region(arena + 128 * MiB + 256 * 1024, arena + 128 * MiB + 512 * 1024, 'rw-p', '', 100),
    // At a 64 MiB boundary, followed by an inaccessible region that does not end 64 MiB after it: not an arena.
    region(arena + 192 * MiB, arena + 193 * MiB, 'rw-p', '', 1_000),
    region(arena + 193 * MiB, arena + 200 * MiB, '---p', '', 0),
    region(0x7ffd00000000, 0x7ffd00021000, 'rw-p', '[stack]', 40),
  ].join('');
  const kib = (n: number) => (n * 1024) / 1e6;
  assert.deepEqual(residentByKind(smaps), {
    filesMB: kib(50_000),
    mallocMainMB: kib(10_000),
    mallocArenasMB: kib(5_000),
    otherAnonymousMB: kib(256 + 100 + 1_000 + 40),
  });
});

test("the kinds of this process's resident memory add up to its resident size", () => {
  const kinds = residentByKindOf(process.pid);
  assert.ok(kinds !== null, 'this is Linux: /proc/self/smaps is there');
  const total = kinds.filesMB + kinds.mallocMainMB + kinds.mallocArenasMB + kinds.otherAnonymousMB;
  const { currentMB } = residentMemory(process.pid)!;
  // Read a moment apart, so within a few MB of each other; each kind a process running Node always has is there.
  assert.ok(Math.abs(total - currentMB) < 5, `${total} MB by kind against VmRSS ${currentMB} MB`);
  assert.ok(kinds.filesMB > 10 && kinds.mallocMainMB > 0 && kinds.otherAnonymousMB > 10, JSON.stringify(kinds));
  assert.equal(residentByKindOf(2 ** 22 + 1), null, 'no such process');
});
