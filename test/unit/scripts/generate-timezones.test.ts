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

const ISO3166_TAB = ['# ISO 3166 alpha-2 country codes', 'AR\tArgentina', 'AQ\tAntarctica', 'DE\tGermany', 'FR\tFrance', ''].join('\n');

interface Zoneinfo {
  readonly 'zone.tab'?: string;
  readonly 'tzdata.zi'?: string;
  readonly 'iso3166.tab'?: string;
}

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly out: string;
  /** The written file, or undefined when the generator wrote none. */
  readonly written: { tzdata: string; sources: Record<string, string>; zones: string[]; aliases: Record<string, string> } | undefined;
}

/** Runs the generator on a zoneinfo directory holding exactly `files` (zone.tab and iso3166.tab by default). */
function generate(files: Zoneinfo, args: readonly string[] = []): Run {
  const directory = mkdtempSync(join(tmpdir(), 'account-api-tz-'));
  try {
    const all: Zoneinfo = { 'zone.tab': ZONE_TAB, 'iso3166.tab': ISO3166_TAB, ...files };
    for (const [name, text] of Object.entries(all)) if (text !== undefined) writeFileSync(join(directory, name), text);
    const out = join(directory, 'timezones.json');
    const result = spawnSync(process.execPath, [GENERATOR, '--zoneinfo', directory, '--out', out, ...args], { encoding: 'utf8' });
    let text: string | undefined;
    try {
      text = readFileSync(out, 'utf8');
    } catch {
      text = undefined;
    }
    return {
      status: result.status,
      stdout: result.stdout,
      stderr: result.stderr,
      out: text ?? '',
      written: text === undefined ? undefined : JSON.parse(text),
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

function sha256(text: string): string {
  return `sha256:${createHash('sha256').update(text).digest('hex')}`;
}

function succeeded(run: Run): NonNullable<Run['written']> {
  assert.equal(run.status, 0, `generator failed: ${run.stderr}`);
  assert.ok(run.written !== undefined, 'generator exited 0 but wrote nothing');
  return run.written;
}

function refused(run: Run, message: RegExp): void {
  assert.notEqual(run.status, 0, `generator should have refused, but wrote: ${run.out}`);
  assert.match(run.stderr, message);
  assert.equal(run.written, undefined, 'a refused run must write nothing');
}

describe('scripts/generate-timezones.ts', () => {
  test('writes the sorted, de-duplicated regional zones plus UTC, the release from tzdata.zi and the files read', () => {
    const tzdataZi = '# version 2099z\n# ddeps zone.tab\nR x 1 2 - Ja 1 0 0 -\n';

    const run = generate({ 'tzdata.zi': tzdataZi });

    succeeded(run);
    assert.equal(
      run.out,
      [
        '{',
        '  "tzdata": "2099z",',
        '  "sources": {',
        `    "tzdata.zi": "${sha256(tzdataZi)}",`,
        `    "zone.tab": "${sha256(ZONE_TAB)}",`,
        `    "iso3166.tab": "${sha256(ISO3166_TAB)}"`,
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
    assert.match(run.stdout, /read tzdata 2099z from .*tzdata\.zi, .*zone\.tab, .*iso3166\.tab/);
  });

  test('writes the links of tzdata.zi as aliases, resolving chains and dropping unlisted targets', () => {
    const tzdataZi = [
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
    ].join('\n');

    const run = generate({ 'tzdata.zi': tzdataZi });

    assert.deepEqual(Object.entries(succeeded(run).aliases), [
      ['America/Buenos_Aires', 'America/Argentina/Buenos_Aires'],
      ['Etc/UTC', 'UTC'],
      ['Europe/Monaco', 'Europe/Paris'],
      ['Europe/Old_Monaco', 'Europe/Paris'],
      ['Zulu', 'UTC'],
    ]);
    assert.match(run.stdout, /5 aliases/);
  });

  describe('an old name whose link leads to the zone its place was merged into', () => {
    // Shaped like Debian's tzdata.zi: zone.tab's places are Zones of their own (built with backzone), the old names
    // link straight to the zone tzdb merged them into, and zone.tab and iso3166.tab are all that is left of the place.
    const ZONE_TAB_MERGED = [
      'CI\t+0519-00402\tAfrica/Abidjan',
      'IS\t+6409-02151\tAtlantic/Reykjavik',
      'PG\t-0930+14710\tPacific/Port_Moresby\tmost of Papua New Guinea',
      'FM\t+0725+15147\tPacific/Chuuk\tChuuk/Truk, Yap',
      'ER\t+1520+03853\tAfrica/Asmara',
      'KE\t-0117+03649\tAfrica/Nairobi',
      'PT\t+3843-00908\tEurope/Lisbon\tPortugal (mainland)',
      'PT\t+3744-02540\tAtlantic/Azores\tAzores',
      'GB\t+513030-0000731\tEurope/London',
      'XA\t+0000+00000\tAfrica/Twin_One\tTwinford',
      'XB\t+0000+00000\tAfrica/Twin_Two\tTwinford',
      'XC\t+0000+00000\tAfrica/Hub',
      'PA\t+0858-07932\tAmerica/Panama',
      'CA\t+484531-0913718\tAmerica/Atikokan\tEST - ON (Atikokan), NU (Coral H)',
      'DE\t+5230+01322\tEurope/Berlin',
      'SJ\t+7800+01600\tArctic/Longyearbyen',
      '',
    ].join('\n');
    const ISO3166_MERGED = [
      'CI\tCote d\'Ivoire',
      'IS\tIceland',
      'PG\tPapua New Guinea',
      'FM\tMicronesia',
      'ER\tEritrea',
      'KE\tKenya',
      'PT\tPortugal',
      'GB\tBritain (UK)',
      'XA\tTwinland A',
      'XB\tTwinland B',
      'XC\tHubland',
      'PA\tPanama',
      'CA\tCanada',
      'DE\tGermany',
      'SJ\tSvalbard & Jan Mayen',
      '',
    ].join('\n');
    const TZDATA_MERGED = [
      '# version 2099z',
      '# ddeps backzone zone.tab',
      'Z Africa/Abidjan -0:16:8 - LMT 1912',
      '0 - GMT',
      'Z Atlantic/Reykjavik -1:28 - LMT 1908',
      '-1 - -01 1968 Ap 7 1s',
      '0 - GMT',
      'Z Pacific/Port_Moresby 9:48:40 - LMT 1880',
      '10 - %z',
      // Same clock as Port_Moresby today, though it spells the abbreviation out and its offset with minutes.
      'Z Pacific/Chuuk -13:52:52 - LMT 1844 D 31',
      '10:00 - +10',
      'Z Africa/Nairobi 2:27:16 - LMT 1908 May',
      '3 - EAT',
      'Z Africa/Asmara 2:35:32 - LMT 1870',
      '3 - EAT',
      'Z Europe/Lisbon -0:36:45 - LMT 1884',
      '0 E WE%sT',
      'Z Atlantic/Azores -1:42:40 - LMT 1884',
      '-1 E -01/+00',
      'Z Europe/London -0:1:15 - LMT 1847 D',
      '0 G %s 1996',
      '0 E GMT/BST',
      'Z Africa/Hub 1 - X',
      'Z Africa/Twin_One 1 - X',
      'Z Africa/Twin_Two 1 - X',
      'Z America/Panama -5:19:36 - CMT 1908 Ap 22',
      '-5 - EST',
      'Z America/Atikokan -6:6:28 - LMT 1895',
      '-5 - EST',
      'Z Europe/Berlin 0:53:28 - LMT 1893 Ap',
      '1 E CE%sT',
      'L Europe/Berlin Arctic/Longyearbyen',
      'L Europe/Berlin Atlantic/Jan_Mayen',
      'L America/Panama America/Coral_Harbour',
      'L Africa/Abidjan Iceland',
      'L Pacific/Port_Moresby Pacific/Truk',
      'L Pacific/Port_Moresby Pacific/Yap',
      'L Africa/Nairobi Africa/Asmera',
      'L Europe/Lisbon Portugal',
      'L Europe/London GB',
      'L Africa/Hub Africa/Twinford',
      '',
    ].join('\n');

    function aliasesOf(files: Zoneinfo = {}): { aliases: Record<string, string>; run: Run } {
      const run = generate({ 'zone.tab': ZONE_TAB_MERGED, 'iso3166.tab': ISO3166_MERGED, 'tzdata.zi': TZDATA_MERGED, ...files });
      return { aliases: succeeded(run).aliases, run };
    }

    test('names the country iso3166.tab calls it when that country has one zone.tab row: Iceland', () => {
      assert.equal(aliasesOf().aliases['Iceland'], 'Atlantic/Reykjavik');
    });

    test('names the row of its area whose comments name it: Pacific/Truk and Pacific/Yap', () => {
      const { aliases } = aliasesOf();
      assert.equal(aliases['Pacific/Truk'], 'Pacific/Chuuk');
      assert.equal(aliases['Pacific/Yap'], 'Pacific/Chuuk');
    });

    test('reads the comments\' shortened names: America/Coral_Harbour from "NU (Coral H)"', () => {
      assert.equal(aliasesOf().aliases['America/Coral_Harbour'], 'America/Atikokan');
    });

    test('names the row of its area spelled one edit away: Africa/Asmera', () => {
      assert.equal(aliasesOf().aliases['Africa/Asmera'], 'Africa/Asmara');
    });

    test('lists each such alias with where its link leads', () => {
      const { run } = aliasesOf();
      assert.match(run.stdout, /5 aliases name their place's zone\.tab entry/);
      assert.match(run.stdout, /Iceland -> Atlantic\/Reykjavik \(link: Africa\/Abidjan\)/);
    });

    test('keeps the link for a country with several rows, and for a name no row names: Portugal, GB', () => {
      const { aliases } = aliasesOf();
      assert.equal(aliases['Portugal'], 'Europe/Lisbon');
      assert.equal(aliases['GB'], 'Europe/London');
    });

    test('does not read a part of a country\'s name: Atlantic/Jan_Mayen is not sent to "Svalbard & Jan Mayen"', () => {
      // tzdb's backzone puts Jan Mayen under Europe/Oslo; Debian's files cannot say so, so the link stays.
      assert.equal(aliasesOf().aliases['Atlantic/Jan_Mayen'], 'Europe/Berlin');
    });

    test('keeps the link when the row that names the place keeps another clock today', () => {
      const shifted = TZDATA_MERGED.replace('10:00 - +10', '11 - +11');
      const { aliases } = aliasesOf({ 'tzdata.zi': shifted });
      assert.equal(aliases['Pacific/Truk'], 'Pacific/Port_Moresby');
      assert.equal(aliases['Iceland'], 'Atlantic/Reykjavik', 'an unrelated place changed');
    });

    test('keeps the link, and says so, when the comments name several places', () => {
      const { aliases, run } = aliasesOf();
      assert.equal(aliases['Africa/Twinford'], 'Africa/Hub');
      assert.match(run.stderr, /names several places for Africa\/Twinford \(Africa\/Twin_One, Africa\/Twin_Two\)/);
    });

    test("follows tzdata's own link to a listed name over every rule: Iceland -> Atlantic/Reykjavik -> Africa/Abidjan", () => {
      // Upstream's vanguard form keeps links to links, which say the place exactly.
      const vanguard = TZDATA_MERGED.replace('L Africa/Abidjan Iceland', 'L Atlantic/Reykjavik Iceland')
        .replace('Z Atlantic/Reykjavik -1:28 - LMT 1908\n-1 - -01 1968 Ap 7 1s\n0 - GMT\n', '')
        .concat('L Africa/Abidjan Atlantic/Reykjavik\n');
      const { aliases } = aliasesOf({ 'tzdata.zi': vanguard, 'iso3166.tab': ISO3166_MERGED.replace('IS\tIceland', 'IS\tSomewhere') });
      assert.equal(aliases['Iceland'], 'Atlantic/Reykjavik');
    });
  });

  test('fails with a clear message when links form a cycle', () => {
    refused(generate({ 'tzdata.zi': '# version 2099z\nL Europe/A Europe/B\nL Europe/B Europe/A\n' }), /cycle/);
  });

  test('refuses a --version that disagrees with tzdata.zi', () => {
    const run = generate({ 'tzdata.zi': '# version 2099z\n' }, ['--version', '2001a']);
    refused(run, /--version says 2001a but .*tzdata\.zi is tzdata 2099z/);
  });

  test('accepts a --version that agrees with tzdata.zi', () => {
    assert.equal(succeeded(generate({ 'tzdata.zi': '# version 2099z\n' }, ['--version', '2099z'])).tzdata, '2099z');
  });

  test('refuses, even with --version, when there is no tzdata.zi to read the release from', () => {
    refused(generate({}, ['--version', '2099z']), /cannot read tzdata\.zi/);
  });

  test('refuses a tzdata.zi whose first line names no release', () => {
    refused(generate({ 'tzdata.zi': '# ddeps zone.tab\n# version 2099z\n' }), /is not "# version <release>"/);
  });

  test('refuses without an iso3166.tab, whose country names the aliases depend on', () => {
    refused(generate({ 'tzdata.zi': '# version 2099z\n', 'iso3166.tab': undefined }), /cannot read iso3166\.tab/);
  });

  test('fails with a clear message when the zone.tab is missing', () => {
    refused(generate({ 'zone.tab': undefined, 'tzdata.zi': '# version 2099z\n' }), /cannot read zone\.tab/);
  });
});
