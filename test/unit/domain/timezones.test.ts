// Protects the committed time zone list, its generator, and the "did you mean" suggestions built on it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { createTimezoneCatalog, levenshtein, loadTimezoneCatalog } from '../../../src/domain/timezones.ts';

const GENERATOR = fileURLToPath(new URL('../../../scripts/generate-timezones.ts', import.meta.url));
const AREAS = ['Africa', 'America', 'Antarctica', 'Arctic', 'Asia', 'Atlantic', 'Australia', 'Europe', 'Indian', 'Pacific'];

describe('the committed time zone list', () => {
  const catalog = loadTimezoneCatalog();

  test('is in code-point order with UTC last', () => {
    const zones = [...catalog.zones];
    assert.equal(zones.at(-1), 'UTC', 'UTC must be the last entry');
    const regional = zones.slice(0, -1);
    assert.deepEqual(regional, [...regional].sort(), 'zones before UTC are not in code-point order');
  });

  test('covers exactly the ten geographic areas, each at least once', () => {
    const areas = new Set(catalog.zones.slice(0, -1).map((name) => name.split('/')[0]));
    assert.deepEqual([...areas].sort(), AREAS);
  });

  test('has no duplicates', () => {
    const seen = new Set<string>();
    const duplicates = catalog.zones.filter((name) => (seen.has(name) ? true : (seen.add(name), false)));
    assert.deepEqual(duplicates, [], `duplicate zone names: ${duplicates.join(', ')}`);
  });

  test('includes nested names such as America/Argentina/Buenos_Aires', () => {
    for (const name of ['America/Argentina/Buenos_Aires', 'America/Indiana/Indianapolis', 'America/Kentucky/Louisville']) {
      assert.ok(catalog.has(name), `${name} is missing`);
    }
  });

  test('holds only names this Node can format dates in', () => {
    const rejected = catalog.zones.filter((name) => {
      try {
        new Intl.DateTimeFormat('en-US', { timeZone: name });
        return false;
      } catch {
        return true;
      }
    });
    assert.deepEqual(
      rejected,
      [],
      `Intl (ICU tz ${process.versions.tz}) rejects ${rejected.length} listed zone(s): ${rejected.join(', ')}`,
    );
  });

  test('names the tzdata release it came from', () => {
    assert.match(catalog.tzdata, /^\d{4}[a-z]$/);
  });

  test('cannot be changed through the catalog', () => {
    assert.throws(() => (catalog.zones as string[]).push('Mars/Olympus_Mons'), TypeError);
  });
});

describe('TimezoneCatalog.has', () => {
  const catalog = loadTimezoneCatalog();

  test('accepts a listed name exactly as written', () => {
    assert.equal(catalog.has('Europe/Paris'), true);
    assert.equal(catalog.has('UTC'), true);
  });

  test('rejects a listed name in the wrong case', () => {
    assert.equal(catalog.has('europe/paris'), false);
    assert.equal(catalog.has('EUROPE/PARIS'), false);
    assert.equal(catalog.has('utc'), false);
  });

  test('rejects names outside the list, including legacy aliases', () => {
    for (const name of ['', 'Mars/Olympus_Mons', 'Etc/UTC', 'GMT', 'US/Pacific', ' Europe/Paris']) {
      assert.equal(catalog.has(name), false, `${JSON.stringify(name)} should not be accepted`);
    }
  });
});

describe('TimezoneCatalog.suggest', () => {
  const catalog = loadTimezoneCatalog();

  test('puts the case-insensitive exact match first', () => {
    assert.equal(catalog.suggest('europe/kyiv')[0], 'Europe/Kyiv');
    assert.equal(catalog.suggest('utc')[0], 'UTC');
    assert.equal(catalog.suggest('AMERICA/NEW_YORK')[0], 'America/New_York');
  });

  test('finds a zone from its city alone, in any case', () => {
    assert.equal(catalog.suggest('Paris')[0], 'Europe/Paris');
    assert.equal(catalog.suggest('paris')[0], 'Europe/Paris');
  });

  test('corrects a typo in a full name', () => {
    assert.equal(catalog.suggest('Europe/Pariss')[0], 'Europe/Paris');
    assert.equal(catalog.suggest('Europe/Lodnon')[0], 'Europe/London');
  });

  test('finds a city whose zone sits under a sub-area', () => {
    assert.equal(catalog.suggest('America/Buenos_Aires')[0], 'America/Argentina/Buenos_Aires');
  });

  test('reads spaces as underscores', () => {
    assert.equal(catalog.suggest('New York')[0], 'America/New_York');
    assert.equal(catalog.suggest('America/Sao Paulo')[0], 'America/Sao_Paulo');
  });

  test('suggests nothing for garbage, blanks or an empty string', () => {
    assert.deepEqual(catalog.suggest('xxxxxxxxxxxxxxxxxxxx'), []);
    assert.deepEqual(catalog.suggest('   '), []);
    assert.deepEqual(catalog.suggest(''), []);
  });

  test('ignores an input too long to be a typo, however close its start', () => {
    assert.deepEqual(catalog.suggest(`Europe/Paris${' '.repeat(100)}`), []);
    assert.deepEqual(catalog.suggest('Europe/Paris'.repeat(1_000_000)), []);
  });

  test('returns at most the limit, three by default', () => {
    assert.ok(catalog.suggest('Europe/Pariss').length <= 3);
    assert.deepEqual(catalog.suggest('Europe/Pariss', 1), ['Europe/Paris']);
    assert.deepEqual(catalog.suggest('Europe/Pariss', 0), []);
  });

  test('breaks ties in code-point order', () => {
    const tiny = createTimezoneCatalog('2099z', ['Pacific/Abc', 'Africa/Abd', 'Europe/Abe']);
    assert.deepEqual(tiny.suggest('Abx'), ['Africa/Abd', 'Europe/Abe', 'Pacific/Abc']);
  });

  test('ranks an exact case-insensitive match ahead of an equally close city', () => {
    const tiny = createTimezoneCatalog('2099z', ['Asia/Utc', 'UTC']);
    assert.deepEqual(tiny.suggest('utc'), ['UTC', 'Asia/Utc']);
  });
});

describe('createTimezoneCatalog', () => {
  test('keeps its own copy of the names it was given', () => {
    const zones = ['Europe/Paris'];
    const catalog = createTimezoneCatalog('2099z', zones);
    zones.push('Europe/Berlin');
    assert.equal(catalog.tzdata, '2099z');
    assert.deepEqual(catalog.zones, ['Europe/Paris']);
    assert.equal(catalog.has('Europe/Berlin'), false);
  });
});

describe('levenshtein', () => {
  test('is zero for equal strings and the other length against an empty one', () => {
    assert.equal(levenshtein('', ''), 0);
    assert.equal(levenshtein('paris', 'paris'), 0);
    assert.equal(levenshtein('', 'abc'), 3);
    assert.equal(levenshtein('abc', ''), 3);
  });

  test('counts one edit for each insertion, deletion or substitution', () => {
    assert.equal(levenshtein('paris', 'pariss'), 1);
    assert.equal(levenshtein('pariss', 'paris'), 1);
    assert.equal(levenshtein('paris', 'parus'), 1);
    assert.equal(levenshtein('kitten', 'sitting'), 3);
    assert.equal(levenshtein('flaw', 'lawn'), 2);
  });

  test('is symmetric and case-sensitive', () => {
    assert.equal(levenshtein('london', 'lodnon'), levenshtein('lodnon', 'london'));
    assert.equal(levenshtein('UTC', 'utc'), 3);
  });

  test('counts an astral character as one edit', () => {
    assert.equal(levenshtein('a😀b', 'ab'), 1);
  });
});

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

  function runGenerator(args: readonly string[]): { status: number | null; stdout: string; stderr: string } {
    const result = spawnSync(process.execPath, [GENERATOR, ...args], { encoding: 'utf8' });
    return { status: result.status, stdout: result.stdout, stderr: result.stderr };
  }

  test('writes the sorted, de-duplicated regional zones plus UTC, with the release from tzdata.zi', () => {
    withTemporaryDirectory((directory) => {
      const zoneTab = join(directory, 'zone.tab');
      const out = join(directory, 'timezones.json');
      writeFileSync(zoneTab, ZONE_TAB);
      writeFileSync(join(directory, 'tzdata.zi'), '# version 2099z\n# ddeps zone.tab\nR x 1 2 - Ja 1 0 0 -\n');

      const result = runGenerator(['--zone-tab', zoneTab, '--out', out]);

      assert.equal(result.status, 0, `generator failed: ${result.stderr}`);
      assert.equal(
        readFileSync(out, 'utf8'),
        [
          '{',
          '  "tzdata": "2099z",',
          '  "source": "zone.tab",',
          '  "zones": [',
          '    "America/Argentina/Buenos_Aires",',
          '    "Antarctica/McMurdo",',
          '    "Europe/Berlin",',
          '    "Europe/Paris",',
          '    "UTC"',
          '  ]',
          '}',
          '',
        ].join('\n'),
      );
    });
  });

  test('prefers --version over tzdata.zi', () => {
    withTemporaryDirectory((directory) => {
      const zoneTab = join(directory, 'zone.tab');
      const out = join(directory, 'timezones.json');
      writeFileSync(zoneTab, ZONE_TAB);
      writeFileSync(join(directory, 'tzdata.zi'), '# version 2099z\n');

      const result = runGenerator(['--zone-tab', zoneTab, '--out', out, '--version', '2001a']);

      assert.equal(result.status, 0, `generator failed: ${result.stderr}`);
      assert.equal(JSON.parse(readFileSync(out, 'utf8')).tzdata, '2001a');
    });
  });

  test('fails with a clear message when no release can be found, and writes nothing', () => {
    withTemporaryDirectory((directory) => {
      const zoneTab = join(directory, 'zone.tab');
      const out = join(directory, 'timezones.json');
      writeFileSync(zoneTab, ZONE_TAB);

      const result = runGenerator(['--zone-tab', zoneTab, '--out', out]);

      assert.notEqual(result.status, 0, 'generator should fail without a release');
      assert.match(result.stderr, /--version/);
      assert.throws(() => readFileSync(out), { code: 'ENOENT' });
    });
  });

  test('fails with a clear message when the zone.tab is missing', () => {
    withTemporaryDirectory((directory) => {
      const zoneTab = join(directory, 'zone.tab');

      const result = runGenerator(['--zone-tab', zoneTab, '--version', '2099z', '--out', join(directory, 'out.json')]);

      assert.notEqual(result.status, 0, 'generator should fail on a missing zone.tab');
      assert.match(result.stderr, /cannot read zone\.tab/);
    });
  });
});
