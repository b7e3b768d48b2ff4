// Protects the generator of src/domain/timezones.json: what it reads, what it writes, and when it refuses.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const GENERATOR = fileURLToPath(new URL('../../../scripts/generate-timezones.ts', import.meta.url));

describe('scripts/generate-timezones.ts', () => {
  const ZONE_TAB = [
    '# tzdb timezone descriptions',
    '#country-',
    '#code\tcoordinates\tTZ\t\t\tcomments',
    'FR\t+4852+00220\tEurope/Paris',
    'AR\t-3436-05827\tAmerica/Argentina/Buenos_Aires\tBuenos Aires (BA, CF)',
    'MC\t+4342+00723\tEurope/Paris\tduplicate row, as links can repeat',
    'XX\t+0000+00000\tEtc/Foo',
    'AQ\t-7750+16636\tAntarctica/McMurdo\tNew Zealand time - McMurdo, South Pole',
    'DE\t+5230+01322\tEurope/Berlin\tmost of Germany',
    '',
  ].join('\n');

  function withTemporaryDirectory(run: (directory: string) => void): void {
    const directory = mkdtempSync(join(tmpdir(), 'account-api-tz-'));
    try {
      run(directory);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  }

  function sha256(text: string): string {
    return `sha256:${createHash('sha256').update(text).digest('hex')}`;
  }

  function runGenerator(args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
    const result = spawnSync(process.execPath, [GENERATOR, ...args], { encoding: 'utf8' });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  }

  test('writes the sorted, de-duplicated regional zones plus UTC, the release from tzdata.zi and the files read', () => {
    withTemporaryDirectory((directory) => {
      const out = join(directory, 'timezones.json');
      const tzdataZi = '# version 2099z\n# ddeps zone.tab\nR x 1 2 - Ja 1 0 0 -\n';
      writeFileSync(join(directory, 'zone.tab'), ZONE_TAB);
      writeFileSync(join(directory, 'tzdata.zi'), tzdataZi);

      const result = runGenerator(['--zoneinfo', directory, '--out', out]);

      assert.equal(result.status, 0, `generator failed: ${result.stderr}`);
      assert.equal(
        readFileSync(out, 'utf8'),
        [
          '{',
          '  "tzdata": "2099z",',
          '  "sources": {',
          `    "tzdata.zi": "${sha256(tzdataZi)}",`,
          `    "zone.tab": "${sha256(ZONE_TAB)}"`,
          '  },',
          '  "zones": [',
          '    "America/Argentina/Buenos_Aires",',
          '    "Antarctica/McMurdo",',
          '    "Europe/Berlin",',
          '    "Europe/Paris",',
          '    "UTC"',
          '  ],',
          '  "aliases": {}',
          '}',
          '',
        ].join('\n'),
      );
      assert.match(result.stdout, /read tzdata 2099z from .*tzdata\.zi, .*zone\.tab/);
    });
  });

  test('writes the links of tzdata.zi as aliases, resolving chains and dropping unlisted targets', () => {
    withTemporaryDirectory((directory) => {
      const out = join(directory, 'timezones.json');
      writeFileSync(join(directory, 'zone.tab'), ZONE_TAB);
      writeFileSync(
        join(directory, 'tzdata.zi'),
        [
          '# version 2099z',
          'Z Europe/Paris 0:9:21 - LMT 1891 Mar 16',
          'Z Etc/UTC 0 - UTC',
          'Z Asia/Tokyo 9 - JST',
          'L Europe/Paris Europe/Monaco',
          // A chain: Old_Monaco -> Europe/Monaco -> Europe/Paris.
          'L Europe/Monaco Europe/Old_Monaco',
          'L America/Argentina/Buenos_Aires America/Buenos_Aires',
          // The list's UTC is itself a link, so Etc/UTC and the other links to it map to UTC.
          'L Etc/UTC UTC',
          'L Etc/UTC Zulu',
          // Targets outside the list (and links to them) are dropped.
          'L Asia/Tokyo Japan',
          'L Japan Asia/Old_Japan',
          'L Etc/GMT GMT',
          // A link to a listed name whose own name is listed adds nothing.
          'L Europe/Berlin Europe/Paris',
          '',
        ].join('\n'),
      );

      const result = runGenerator(['--zoneinfo', directory, '--out', out]);

      assert.equal(result.status, 0, `generator failed: ${result.stderr}`);
      const written = JSON.parse(readFileSync(out, 'utf8'));
      assert.deepEqual(Object.entries(written.aliases), [
        ['America/Buenos_Aires', 'America/Argentina/Buenos_Aires'],
        ['Etc/UTC', 'UTC'],
        ['Europe/Monaco', 'Europe/Paris'],
        ['Europe/Old_Monaco', 'Europe/Paris'],
        ['Zulu', 'UTC'],
      ]);
      assert.match(result.stdout, /5 aliases/);
    });
  });

  test('fails with a clear message when links form a cycle', () => {
    withTemporaryDirectory((directory) => {
      const out = join(directory, 'timezones.json');
      writeFileSync(join(directory, 'zone.tab'), ZONE_TAB);
      writeFileSync(join(directory, 'tzdata.zi'), '# version 2099z\nL Europe/A Europe/B\nL Europe/B Europe/A\n');

      const result = runGenerator(['--zoneinfo', directory, '--out', out]);

      assert.notEqual(result.status, 0, 'generator should fail on a link cycle');
      assert.match(result.stderr, /cycle/);
      assert.throws(() => readFileSync(out), { code: 'ENOENT' });
    });
  });

  test('refuses a --version that disagrees with tzdata.zi, and writes nothing', () => {
    withTemporaryDirectory((directory) => {
      const out = join(directory, 'timezones.json');
      writeFileSync(join(directory, 'zone.tab'), ZONE_TAB);
      writeFileSync(join(directory, 'tzdata.zi'), '# version 2099z\n');

      const result = runGenerator(['--zoneinfo', directory, '--out', out, '--version', '2001a']);

      assert.notEqual(result.status, 0, 'generator should refuse a release the files do not carry');
      assert.match(result.stderr, /--version says 2001a but .*tzdata\.zi is tzdata 2099z/);
      assert.throws(() => readFileSync(out), { code: 'ENOENT' });
    });
  });

  test('accepts a --version that agrees with tzdata.zi', () => {
    withTemporaryDirectory((directory) => {
      const out = join(directory, 'timezones.json');
      writeFileSync(join(directory, 'zone.tab'), ZONE_TAB);
      writeFileSync(join(directory, 'tzdata.zi'), '# version 2099z\n');

      const result = runGenerator(['--zoneinfo', directory, '--out', out, '--version', '2099z']);

      assert.equal(result.status, 0, `generator failed: ${result.stderr}`);
      assert.equal(JSON.parse(readFileSync(out, 'utf8')).tzdata, '2099z');
    });
  });

  test('refuses, even with --version, when there is no tzdata.zi to read the release from', () => {
    withTemporaryDirectory((directory) => {
      const out = join(directory, 'timezones.json');
      writeFileSync(join(directory, 'zone.tab'), ZONE_TAB);

      const result = runGenerator(['--zoneinfo', directory, '--out', out, '--version', '2099z']);

      assert.notEqual(result.status, 0, 'generator should fail without tzdata.zi');
      assert.match(result.stderr, /cannot read tzdata\.zi/);
      assert.throws(() => readFileSync(out), { code: 'ENOENT' });
    });
  });

  test('refuses a tzdata.zi whose first line names no release, and writes nothing', () => {
    withTemporaryDirectory((directory) => {
      const out = join(directory, 'timezones.json');
      writeFileSync(join(directory, 'zone.tab'), ZONE_TAB);
      writeFileSync(join(directory, 'tzdata.zi'), '# ddeps zone.tab\n# version 2099z\n');

      const result = runGenerator(['--zoneinfo', directory, '--out', out]);

      assert.notEqual(result.status, 0, 'generator should fail without a release');
      assert.match(result.stderr, /is not "# version <release>"/);
      assert.throws(() => readFileSync(out), { code: 'ENOENT' });
    });
  });

  test('fails with a clear message when the zone.tab is missing', () => {
    withTemporaryDirectory((directory) => {
      const result = runGenerator(['--zoneinfo', directory, '--out', join(directory, 'out.json')]);

      assert.notEqual(result.status, 0, 'generator should fail on a missing zone.tab');
      assert.match(result.stderr, /cannot read zone\.tab/);
    });
  });
});
