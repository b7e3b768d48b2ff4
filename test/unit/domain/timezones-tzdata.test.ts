// Checks every alias in timezones.json against this machine's own tzdata files, read here without the generator's code.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import committed from '../../../src/domain/timezones.json' with { type: 'json' };

const ZONEINFO = '/usr/share/zoneinfo';
const FILES = ['tzdata.zi', 'zone.tab', 'iso3166.tab'] as const;
const INSTALL_HINT = 'install the newest with `apt-get install -y tzdata`, or regenerate with `npm run tz:generate`';

/** What one zoneinfo directory says, read independently of scripts/generate-timezones.ts. */
interface Tzdb {
  readonly release: string;
  /** File name -> "sha256:<hex>", comparable with timezones.json's sources. */
  readonly digests: Readonly<Record<string, string>>;
  readonly links: ReadonlyMap<string, string>;
  /** Zone -> "UTOFF-seconds RULES" of the line in force today. */
  readonly clock: ReadonlyMap<string, string>;
  readonly rows: readonly { country: string; zone: string; comments: string }[];
  readonly countries: ReadonlyMap<string, string>;
}

function readTzdb(directory: string): Tzdb {
  const missing = FILES.filter((name) => !existsSync(join(directory, name)));
  assert.deepEqual(missing, [], `${directory} lacks ${missing.join(', ')}: ${INSTALL_HINT}`);
  const text = (name: string): string => readFileSync(join(directory, name), 'utf8');
  const digests = Object.fromEntries(
    FILES.map((name) => [name, `sha256:${createHash('sha256').update(readFileSync(join(directory, name))).digest('hex')}`]),
  );

  const zi = text('tzdata.zi');
  const release = /^# version (\S+)\n/.exec(zi)?.[1];
  assert.ok(release !== undefined, `${directory}/tzdata.zi does not start with "# version <release>"`);

  const links = new Map<string, string>();
  for (const [, target, name] of zi.matchAll(/^L (\S+) (\S+)$/gm)) links.set(name!, target!);

  // A Zone's lines run from its "Z" line to the next R, Z or L line; the last of them has no UNTIL.
  const clock = new Map<string, string>();
  for (const [, name, body] of zi.matchAll(/^Z (\S+) (.*(?:\n(?![RZL] |#).*)*)/gm)) {
    const lastLine = body!.trimEnd().split('\n').at(-1)!.trim().split(/\s+/);
    const [utoff = '', rules = ''] = lastLine;
    const [h = 0, m = 0, s = 0] = utoff.replace('-', '').split(':').map(Number);
    clock.set(name!, `${(utoff.startsWith('-') ? -1 : 1) * (h * 3600 + m * 60 + s)} ${rules}`);
  }

  const rows = [...text('zone.tab').matchAll(/^([A-Z]{2})\t[^\t]+\t([^\t\n]+)(?:\t([^\n]*))?$/gm)].map(([, country, zone, comments]) => ({
    country: country!,
    zone: zone!,
    comments: comments ?? '',
  }));
  const countries = new Map([...text('iso3166.tab').matchAll(/^([A-Z]{2})\t([^\n]+)$/gm)].map(([, code, name]) => [code!, name!]));
  return { release, digests, links, clock, rows, countries };
}

function listedZones(tzdb: Tzdb): Set<string> {
  const areas = new Set(['Africa', 'America', 'Antarctica', 'Arctic', 'Asia', 'Atlantic', 'Australia', 'Europe', 'Indian', 'Pacific']);
  return new Set([...tzdb.rows.map((row) => row.zone).filter((zone) => areas.has(zone.split('/')[0]!)), 'UTC']);
}

function chainOf(name: string, tzdb: Tzdb): string[] {
  const target = tzdb.links.get(name);
  return target === undefined ? [name] : [name, ...chainOf(target, tzdb)];
}

function words(text: string): string[] {
  return text.replace(/_/g, ' ').toLowerCase().trim().split(/\s+/);
}

function oneEditApart(a: string, b: string): boolean {
  if (a === b) return true;
  if (Math.abs(a.length - b.length) > 1) return false;
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    if (a[i] !== b[i]) return a.slice(i + 1) === b.slice(i + 1) || a.slice(i) === b.slice(i + 1) || a.slice(i + 1) === b.slice(i);
  }
  return true;
}

/**
 * The zone.tab rows whose own text names the old name's place: a comment in the same area naming its city (words
 * may be cut short after the first, as in "Coral H"), a city in the same area one edit away, or, for a name with
 * no area, the country of that name when it has a single row.
 */
function rowsNamingPlace(name: string, tzdb: Tzdb): string[] {
  const slash = name.indexOf('/');
  const area = slash === -1 ? undefined : name.slice(0, slash);
  const city = words(name.slice(name.lastIndexOf('/') + 1));
  const named = tzdb.rows.filter((row) => {
    if (area === undefined) {
      const singleRow = tzdb.rows.filter((other) => other.country === row.country).length === 1;
      return singleRow && words(tzdb.countries.get(row.country) ?? '').join(' ') === city.join(' ');
    }
    if (!row.zone.startsWith(`${area}/`)) return false;
    const inComments = row.comments.split(/[,/;()]|\s-\s/).some((piece) => {
      const said = words(piece);
      if (piece.trim() === '' || said.length !== city.length) return false;
      return said.every((word, i) => (i === 0 ? word === city[0] : city[i]!.startsWith(word)));
    });
    const rowCity = words(row.zone.slice(row.zone.lastIndexOf('/') + 1)).join(' ');
    return inComments || (city.join(' ').length >= 4 && oneEditApart(city.join(' '), rowCity));
  });
  return [...new Set(named.map((row) => row.zone))];
}

function clockOf(name: string, tzdb: Tzdb): string | undefined {
  return tzdb.clock.get(chainOf(name, tzdb).at(-1)!);
}

// tzdb's `backward` file (2026c), which Debian does not ship, for the three names no Debian file places: their
// "#= TARGET1" notes, copied here from that file rather than from the generator.
const BACKWARD_NOTES: Readonly<Record<string, string>> = {
  'Africa/Timbuktu': 'Africa/Bamako', // Link Africa/Abidjan Africa/Timbuktu #= Africa/Bamako
  'America/Virgin': 'America/St_Thomas', // Link America/Puerto_Rico America/Virgin #= America/St_Thomas
  'Atlantic/Jan_Mayen': 'Europe/Oslo', // Link Europe/Berlin Atlantic/Jan_Mayen #= Europe/Oslo
};

/** The listed zone an old name should be suggested as, by what the files in `tzdb` say; undefined for none. */
function expectedSuggestion(name: string, tzdb: Tzdb): string | undefined {
  const listed = listedZones(tzdb);
  const chain = chainOf(name, tzdb);
  const end = chain.at(-1)!;
  const onTheWay = chain.slice(1, -1).find((step) => listed.has(step));
  if (onTheWay !== undefined) return onTheWay;
  const byLink = listed.has(end) ? end : [...listed].sort().find((zone) => zone !== end && chainOf(zone, tzdb).at(-1) === end);
  if (byLink === undefined) return undefined;
  const clock = clockOf(name, tzdb);
  const note = BACKWARD_NOTES[name];
  if (note !== undefined && listed.has(note) && clockOf(note, tzdb) === clock) return note;
  const places = rowsNamingPlace(name, tzdb).filter((zone) => clock !== undefined && clockOf(zone, tzdb) === clock);
  return places.length === 1 && places[0] !== byLink ? places[0] : byLink;
}

interface Comparison {
  readonly exact: boolean;
  readonly wrong: readonly string[];
  /** Aliases whose link or place the installed files no longer record as the list did: not comparable. */
  readonly changed: readonly string[];
  readonly checked: number;
}

/**
 * Compares aliases with what `tzdb` says. When its files are the very ones the list records, every alias and every
 * link must agree. Otherwise only the aliases whose ground is unchanged are compared: the old name still links to
 * the suggestion's zone, or the suggestion's zone.tab row still names the old name's place.
 */
function compareAliases(aliases: Readonly<Record<string, string>>, recorded: Readonly<Record<string, string>>, tzdb: Tzdb): Comparison {
  const exact = FILES.every((name) => recorded[name] === tzdb.digests[name]);
  const listed = listedZones(tzdb);
  const names = exact
    ? [...new Set([...Object.keys(aliases), ...tzdb.links.keys()])].filter((name) => !listed.has(name))
    : Object.keys(aliases);
  const wrong: string[] = [];
  const changed: string[] = [];
  for (const name of names.sort()) {
    const suggested = aliases[name];
    const comparable =
      exact ||
      (suggested !== undefined &&
        listed.has(suggested) &&
        (chainOf(name, tzdb).at(-1) === chainOf(suggested, tzdb).at(-1) || rowsNamingPlace(name, tzdb).includes(suggested)));
    if (!comparable) {
      changed.push(name);
      continue;
    }
    const expected = expectedSuggestion(name, tzdb);
    if (expected !== suggested) {
      wrong.push(`${name}: list says ${suggested ?? '(nothing)'}, tzdata ${tzdb.release} says ${expected ?? '(nothing)'}`);
    }
  }
  return { exact, wrong, changed, checked: names.length - changed.length };
}

describe(`the aliases in timezones.json, against the tzdata installed in ${ZONEINFO}`, () => {
  test('each suggests the zone.tab entry that the installed tzdata names for the same place', (t) => {
    const tzdb = readTzdb(ZONEINFO);
    const result = compareAliases(committed.aliases, committed.sources, tzdb);
    if (!result.exact) {
      t.diagnostic(
        `installed tzdata ${tzdb.release} is not the ${committed.tzdata} files the list records: checked ${result.checked} of ` +
          `${Object.keys(committed.aliases).length} aliases, skipped ${result.changed.length} whose links changed ` +
          `(${result.changed.join(', ') || 'none'}); for the full check ${INSTALL_HINT}`,
      );
    }
    assert.deepEqual(result.wrong, [], `aliases that disagree with the installed tzdata ${tzdb.release}:\n${result.wrong.join('\n')}`);
    const total = Object.keys(committed.aliases).length;
    assert.ok(result.checked >= total / 2, `only ${result.checked} of ${total} aliases could be compared; ${INSTALL_HINT}`);
  });

  test('each keeps the clock its old name keeps today', () => {
    const tzdb = readTzdb(ZONEINFO);
    // Names whose links moved in another installed release are the first test's to report, not this one's.
    const changed = new Set(compareAliases(committed.aliases, committed.sources, tzdb).changed);
    const drifting = Object.entries(committed.aliases).filter(
      ([name, zone]) => !changed.has(name) && clockOf(zone, tzdb) !== clockOf(name, tzdb),
    );
    assert.deepEqual(drifting, [], `aliases that would change the user's clock: ${JSON.stringify(drifting)}`);
  });

  test('name the places that tzdb itself gives, where Debian\'s files can tell', () => {
    // From tzdb's `backward` ("#= TARGET1" notes) and `backzone` links (2026c), the files Debian does not ship. The last
    // three link to other countries' zones and no Debian file names them: the generator quotes backward for those.
    const places: Readonly<Record<string, string>> = {
      'Africa/Timbuktu': 'Africa/Bamako',
      'America/Virgin': 'America/St_Thomas',
      'Atlantic/Jan_Mayen': 'Europe/Oslo',
      Iceland: 'Atlantic/Reykjavik',
      'Pacific/Truk': 'Pacific/Chuuk',
      'Pacific/Yap': 'Pacific/Chuuk',
      'Pacific/Ponape': 'Pacific/Pohnpei',
      'Africa/Asmera': 'Africa/Asmara',
      'Antarctica/South_Pole': 'Antarctica/McMurdo',
      'America/Coral_Harbour': 'America/Atikokan',
      'Europe/Kiev': 'Europe/Kyiv',
      'Asia/Calcutta': 'Asia/Kolkata',
      'US/Pacific': 'America/Los_Angeles',
    };
    const aliases: Readonly<Record<string, string>> = committed.aliases;
    const wrong = Object.entries(places).filter(([name, zone]) => aliases[name] !== zone);
    assert.deepEqual(wrong.map(([name, zone]) => `${name}: ${aliases[name]}, not ${zone}`), []);
  });

  test('records the release and the digest of each file it was built from', () => {
    assert.match(committed.tzdata, /^\d{4}[a-z]$/);
    assert.deepEqual(Object.keys(committed.sources).sort(), [...FILES].sort());
    for (const digest of Object.values(committed.sources)) assert.match(digest, /^sha256:[0-9a-f]{64}$/);
  });
});

describe('the comparison with an installed tzdata of another release', () => {
  /** Reads a copy of the installed files whose release line says 2000a, after `edit`. */
  function otherRelease(edit: (tzdataZi: string) => string = (text) => text): Tzdb {
    const directory = mkdtempSync(join(tmpdir(), 'account-api-tzdata-'));
    try {
      for (const name of FILES) {
        const text = readFileSync(join(ZONEINFO, name), 'utf8');
        writeFileSync(join(directory, name), name === 'tzdata.zi' ? edit(text.replace(/^# version \S+/, '# version 2000a')) : text);
      }
      return readTzdb(directory);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  }

  test('still checks every alias whose link is unchanged, and skips one whose link moved', () => {
    const before = compareAliases(committed.aliases, committed.sources, otherRelease());
    const after = compareAliases(
      committed.aliases,
      committed.sources,
      otherRelease((text) => text.replace(/^L \S+ Europe\/Kiev$/m, 'L Europe/Paris Europe/Kiev')),
    );
    assert.equal(after.exact, false);
    assert.deepEqual(after.changed, [...before.changed, 'Europe/Kiev'].sort());
    assert.deepEqual(after.wrong, before.wrong);
    assert.equal(after.checked, before.checked - 1);
  });

  test('still catches a suggestion for another place, such as Iceland -> Africa/Abidjan', () => {
    const tzdb = otherRelease();
    const before = compareAliases(committed.aliases, committed.sources, tzdb);
    const broken = { ...committed.aliases, Iceland: 'Africa/Abidjan', 'Pacific/Truk': 'Pacific/Port_Moresby' };
    const after = compareAliases(broken, committed.sources, tzdb);
    assert.deepEqual(
      after.wrong,
      [
        ...before.wrong,
        'Iceland: list says Africa/Abidjan, tzdata 2000a says Atlantic/Reykjavik',
        'Pacific/Truk: list says Pacific/Port_Moresby, tzdata 2000a says Pacific/Chuuk',
      ].sort(),
    );
  });

  test('compares every link, both ways, when the files are the ones recorded', () => {
    const tzdb = readTzdb(ZONEINFO);
    const before = compareAliases(committed.aliases, tzdb.digests, tzdb);
    const missingOne: Record<string, string> = { ...committed.aliases };
    delete missingOne['Europe/Kiev'];
    const after = compareAliases(missingOne, tzdb.digests, tzdb);
    assert.equal(after.exact, true);
    assert.deepEqual(after.wrong, [...before.wrong, `Europe/Kiev: list says (nothing), tzdata ${tzdb.release} says Europe/Kyiv`].sort());
  });
});
