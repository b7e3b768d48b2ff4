// Protects the committed time zone list and the "did you mean" suggestions built on it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import committed from '../../../src/domain/timezones.json' with { type: 'json' };
import { createTimezoneCatalog, levenshtein, loadTimezoneCatalog } from '../../../src/domain/timezones.ts';

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

  test('maps every alias to a listed zone', () => {
    const zones = new Set(committed.zones);
    const dangling = Object.entries(committed.aliases).filter(([, target]) => !zones.has(target));
    assert.deepEqual(dangling, [], `aliases whose target is not a listed zone: ${JSON.stringify(dangling)}`);
  });

  test('has no alias that is itself a listed zone', () => {
    const zones = new Set(committed.zones);
    const listed = Object.keys(committed.aliases).filter((alias) => zones.has(alias));
    assert.deepEqual(listed, [], `aliases that are also listed zones: ${listed.join(', ')}`);
  });

  test('keeps aliases in code-point order and carries the well-known renames', () => {
    const aliases: Readonly<Record<string, string>> = committed.aliases;
    const names = Object.keys(aliases);
    assert.deepEqual(names, [...names].sort(), 'alias names are not in code-point order');
    assert.equal(aliases['Europe/Kiev'], 'Europe/Kyiv');
    assert.equal(aliases['Asia/Calcutta'], 'Asia/Kolkata');
    assert.equal(aliases['Etc/UTC'], 'UTC');
  });

  test('maps an old name to the zone.tab entry of its own place, not the zone it was merged into', () => {
    const aliases: Readonly<Record<string, string>> = committed.aliases;
    assert.equal(aliases['Iceland'], 'Atlantic/Reykjavik', 'Iceland must not be sent to Africa/Abidjan');
    assert.equal(aliases['Pacific/Truk'], 'Pacific/Chuuk', 'Pacific/Truk must not be sent to Pacific/Port_Moresby');
    assert.equal(aliases['Pacific/Yap'], 'Pacific/Chuuk', 'Pacific/Yap must not be sent to Pacific/Port_Moresby');
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

  test('offers only the clear match for a city, with no weak tail', () => {
    assert.deepEqual(catalog.suggest('Paris'), ['Europe/Paris']);
  });

  test('offers the current name, alone, for an old name tzdb keeps as a link', () => {
    const renames: ReadonlyArray<readonly [string, string]> = [
      ['Europe/Kiev', 'Europe/Kyiv'],
      ['europe/kiev', 'Europe/Kyiv'],
      ['Asia/Calcutta', 'Asia/Kolkata'],
      ['US/Pacific', 'America/Los_Angeles'],
      ['america/buenos_aires', 'America/Argentina/Buenos_Aires'],
      ['Etc/UTC', 'UTC'],
      ['Iceland', 'Atlantic/Reykjavik'],
      ['iceland', 'Atlantic/Reykjavik'],
      ['Pacific/Truk', 'Pacific/Chuuk'],
      ['Pacific/Yap', 'Pacific/Chuuk'],
      ['Pacific/Ponape', 'Pacific/Pohnpei'],
    ];
    for (const [old, current] of renames) {
      assert.deepEqual(catalog.suggest(old), [current], `${old} should suggest only ${current}`);
    }
  });

  test('still rejects the old names themselves', () => {
    for (const old of ['Europe/Kiev', 'Asia/Calcutta', 'US/Pacific', 'America/Buenos_Aires', 'Iceland', 'Pacific/Truk']) {
      assert.equal(catalog.has(old), false, `${old} should not be accepted`);
    }
  });

  test('corrects a typo in a full name', () => {
    assert.equal(catalog.suggest('Europe/Pariss')[0], 'Europe/Paris');
    assert.equal(catalog.suggest('Europe/Lodnon')[0], 'Europe/London');
  });

  test('finds a city whose zone sits under a sub-area, with no alias to help', () => {
    assert.equal(catalog.suggest('America/Vevay')[0], 'America/Indiana/Vevay');
    assert.equal(catalog.suggest('America/Knox')[0], 'America/Indiana/Knox');
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

  test('offers only the exact case-insensitive match, not an equally close city', () => {
    const tiny = createTimezoneCatalog('2099z', ['Asia/Utc', 'UTC']);
    assert.deepEqual(tiny.suggest('utc'), ['UTC']);
  });

  test('prefers a listed name over an alias spelled the same in another case', () => {
    const tiny = createTimezoneCatalog('2099z', ['Europe/Kyiv', 'Europe/Paris'], { 'europe/paris': 'Europe/Kyiv' });
    assert.deepEqual(tiny.suggest('EUROPE/PARIS'), ['Europe/Paris']);
  });

  test('falls back to ranking when an alias leads to no listed name', () => {
    const tiny = createTimezoneCatalog('2099z', ['Europe/Kyiv'], { 'Europe/Kiev': 'Europe/Nowhere' });
    assert.deepEqual(tiny.suggest('Europe/Kiev'), ['Europe/Kyiv']);
    assert.deepEqual(tiny.suggest('Europe/Kievv'), ['Europe/Kyiv']);
    const far = createTimezoneCatalog('2099z', ['Europe/Kyiv'], { GMT: 'Etc/GMT' });
    assert.deepEqual(far.suggest('GMT'), []);
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

  test('does not accept an alias, however it is spelled', () => {
    const catalog = createTimezoneCatalog('2099z', ['Europe/Kyiv'], { 'Europe/Kiev': 'Europe/Kyiv' });
    assert.equal(catalog.has('Europe/Kiev'), false);
    assert.equal(catalog.has('europe/kiev'), false);
    assert.deepEqual(catalog.zones, ['Europe/Kyiv']);
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
