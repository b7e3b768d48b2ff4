// Regenerates src/domain/timezones.json, the committed list of accepted IANA zone names, from one zoneinfo directory:
// zone.tab for the list, tzdata.zi for the release and the old names tzdb keeps as links, and iso3166.tab so that
// each old name is suggested as the zone.tab entry of the place it stands for.
import { createHash } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

// The geographic areas of tzdb; zone.tab only lists these today, but filtering keeps
// legacy or administrative names (Etc/*, US/*) out if a future file carries them.
const ACCEPTED_AREAS: ReadonlySet<string> = new Set([
  'Africa',
  'America',
  'Antarctica',
  'Arctic',
  'Asia',
  'Atlantic',
  'Australia',
  'Europe',
  'Indian',
  'Pacific',
]);

const DEFAULT_ZONEINFO = '/usr/share/zoneinfo';
// Resolved against the script, not the working directory, so the default lands in the repository from anywhere.
const DEFAULT_OUT = fileURLToPath(new URL('../src/domain/timezones.json', import.meta.url));
const TZDATA_RELEASE = /^\d{4}[a-z]+$/;

const USAGE =
  'usage: node scripts/generate-timezones.ts [--zoneinfo /usr/share/zoneinfo] [--version 2026f] [--out src/domain/timezones.json]\n' +
  '  --version only checks: the release always comes from the first line of tzdata.zi, and a different one is refused';

interface GeneratorOptions {
  readonly zoneinfo: string;
  /** The release the caller expects; never recorded unless tzdata.zi says the same. */
  readonly expectedRelease: string | undefined;
  readonly out: string;
}

/** One tzdata file as read, with the digest that lets anyone check a later regeneration read the same bytes. */
interface SourceFile {
  readonly name: string;
  readonly path: string;
  readonly text: string;
  readonly sha256: string;
}

interface TimezoneFile {
  readonly tzdata: string;
  /** Each file read, by name, with the SHA-256 of its bytes. */
  readonly sources: Readonly<Record<string, string>>;
  readonly zones: readonly string[];
  /** Old name -> the listed zone of the place it stands for, keys in code-point order. */
  readonly aliases: Readonly<Record<string, string>>;
}

class GeneratorError extends Error {}

function readOptions(argv: readonly string[]): GeneratorOptions {
  try {
    const { values } = parseArgs({
      args: [...argv],
      options: {
        'zoneinfo': { type: 'string', default: DEFAULT_ZONEINFO },
        version: { type: 'string' },
        out: { type: 'string', default: DEFAULT_OUT },
      },
      strict: true,
      allowPositionals: false,
    });
    return { zoneinfo: resolve(values.zoneinfo), expectedRelease: values.version, out: resolve(values.out) };
  } catch (error) {
    throw new GeneratorError(`${(error as Error).message}\n${USAGE}`);
  }
}

function readSource(directory: string, name: string): SourceFile {
  const path = join(directory, name);
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new GeneratorError(`cannot read ${name} at ${path}: ${(error as Error).message}`);
  }
  return { name, path, text: bytes.toString('utf8'), sha256: createHash('sha256').update(bytes).digest('hex') };
}

// The release is part of the data: the API reports it and the ETag carries it, so it comes from the files read,
// never from a flag alone. A flag that disagrees means the caller is looking at other files than they think.
function tzdataRelease(tzdataZi: SourceFile, expected: string | undefined): string {
  if (expected !== undefined && !TZDATA_RELEASE.test(expected)) {
    throw new GeneratorError(`--version must look like a tzdata release such as 2026f, got ${JSON.stringify(expected)}`);
  }
  const firstLine = tzdataZi.text.split('\n', 1)[0] ?? '';
  const release = /^#\s*version\s+(\S+)\s*$/.exec(firstLine)?.[1];
  if (release === undefined || !TZDATA_RELEASE.test(release)) {
    throw new GeneratorError(
      `the first line of ${tzdataZi.path} is not "# version <release>" (found ${JSON.stringify(firstLine)}), so the release is unknown`,
    );
  }
  if (expected !== undefined && expected !== release) {
    throw new GeneratorError(`--version says ${expected} but ${tzdataZi.path} is tzdata ${release}; refusing to record either`);
  }
  return release;
}

interface ZoneTabRow {
  readonly country: string;
  readonly zone: string;
  readonly comments: string;
}

interface TzdataZi {
  /** Link name -> target, from the `L TARGET LINKNAME` lines. */
  readonly links: ReadonlyMap<string, string>;
  /**
   * Zone name -> the STDOFF and RULES of its last line, the clock it keeps today. FORMAT is left out: it only
   * spells the abbreviation, and newer zones write "+10" as "%z".
   */
  readonly clockToday: ReadonlyMap<string, string>;
}

/** The rows of the accepted areas, in file order. */
function zoneTabRows(text: string, zoneTab: string): ZoneTabRow[] {
  const rows: ZoneTabRow[] = [];
  for (const [index, line] of text.split(/\r?\n/).entries()) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const [country, , zone, comments = ''] = line.split('\t');
    if (country === undefined || zone === undefined || zone === '') {
      throw new GeneratorError(`${zoneTab}:${index + 1}: expected tab-separated code, coordinates, TZ, got ${JSON.stringify(line)}`);
    }
    if (ACCEPTED_AREAS.has(zone.split('/', 1)[0] ?? '')) rows.push({ country, zone, comments });
  }
  if (rows.length === 0) {
    throw new GeneratorError(`${zoneTab} has no zones in the accepted areas; is it really a zone.tab?`);
  }
  return rows;
}

/** Country code -> name, such as IS -> Iceland. */
function countryNames(text: string, iso3166Tab: string): Map<string, string> {
  const names = new Map<string, string>();
  for (const [index, line] of text.split(/\r?\n/).entries()) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const [code, name] = line.split('\t');
    if (code === undefined || name === undefined) {
      throw new GeneratorError(`${iso3166Tab}:${index + 1}: expected "CODE<tab>NAME", got ${JSON.stringify(line)}`);
    }
    names.set(code, name);
  }
  return names;
}

// zic accepts any prefix of a keyword, in any case; a line that starts with none is a Zone continuation line.
function keywordOf(field: string | undefined): 'link' | 'rule' | 'zone' | undefined {
  const word = field?.toLowerCase() ?? '';
  if (word === '' || /^[-+0-9]/.test(word)) return undefined;
  return (['link', 'rule', 'zone'] as const).find((keyword) => keyword.startsWith(word));
}

/** STDOFF in seconds and RULES, so "10" and "10:00" compare equal. */
function clockOf([stdoff = '', rules = '']: readonly string[]): string {
  const sign = stdoff.startsWith('-') ? -1 : 1;
  const [hours = 0, minutes = 0, seconds = 0] = stdoff.replace(/^[-+]/, '').split(':').map(Number);
  return `${sign * (hours * 3600 + minutes * 60 + seconds)} ${rules}`;
}

function readTzdataZi(text: string, tzdataZi: string): TzdataZi {
  const links = new Map<string, string>();
  const clockToday = new Map<string, string>();
  let zone: string | undefined;
  for (const [index, line] of text.split(/\r?\n/).entries()) {
    const fields = line.replace(/#.*/, '').trim().split(/\s+/).filter((field) => field !== '');
    if (fields.length === 0) continue;
    const keyword = keywordOf(fields[0]);
    if (keyword === 'link') {
      const [, target, name] = fields;
      if (target === undefined || name === undefined || fields.length !== 3) {
        throw new GeneratorError(`${tzdataZi}:${index + 1}: expected "L TARGET LINKNAME", got ${JSON.stringify(line)}`);
      }
      links.set(name, target);
      zone = undefined;
    } else if (keyword === 'zone') {
      zone = fields[1];
      if (zone !== undefined) clockToday.set(zone, clockOf(fields.slice(2)));
    } else if (keyword === 'rule') {
      zone = undefined;
    } else if (zone !== undefined) {
      // Each continuation line supersedes the one before it; the last one has no UNTIL and is in force today.
      clockToday.set(zone, clockOf(fields));
    }
  }
  return { links, clockToday };
}

/** The name and every link target after it, ending at a name that is not itself a link. */
function linkChain(name: string, links: ReadonlyMap<string, string>, tzdataZi: string): string[] {
  const chain = [name];
  for (let target = links.get(name); target !== undefined; target = links.get(target)) {
    if (chain.includes(target)) {
      throw new GeneratorError(`${tzdataZi}: links form a cycle: ${[...chain, target].join(' -> ')}`);
    }
    chain.push(target);
  }
  return chain;
}

/** True when `a` becomes `b` with at most one insertion, deletion or substitution. */
function withinOneEdit(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1) return false;
  let start = 0;
  while (start < a.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  return endA - start <= 1 && endB - start <= 1;
}

interface Places {
  readonly rows: readonly ZoneTabRow[];
  /** Country code -> its name in iso3166.tab. */
  readonly countries: ReadonlyMap<string, string>;
  readonly rowsPerCountry: ReadonlyMap<string, number>;
}

function placesOf(rows: readonly ZoneTabRow[], countries: ReadonlyMap<string, string>): Places {
  const rowsPerCountry = new Map<string, number>();
  for (const row of rows) rowsPerCountry.set(row.country, (rowsPerCountry.get(row.country) ?? 0) + 1);
  return { rows, countries, rowsPerCountry };
}

function placeWords(text: string): string[] {
  return text.replaceAll('_', ' ').toLowerCase().trim().split(/\s+/);
}

/** zone.tab's comments shorten names to keep rows short ("NU (Coral H)"): each word may be cut, never the first. */
function abbreviates(short: readonly string[], full: readonly string[]): boolean {
  return short.length === full.length && short[0] === full[0] && short.every((word, index) => full[index]!.startsWith(word));
}

/**
 * The zone.tab rows that stand for the same place as an old name. tzdb says this exactly in the `#= TARGET1`
 * notes of its `backward` file and the links of `backzone`, but Debian ships neither: its tzdata.zi links
 * Iceland straight to Africa/Abidjan and Pacific/Truk to Pacific/Port_Moresby, the zones they were merged
 * into. What is left of the place is in zone.tab and iso3166.tab, read by three rules:
 *  - a row in the old name's area whose comments name its city, maybe shortened (Pacific/Truk and Pacific/Yap:
 *    "Chuuk/Truk, Yap"; America/Coral_Harbour: "NU (Coral H)");
 *  - a row in the old name's area whose city is spelled one edit away (Africa/Asmera: Africa/Asmara);
 *  - for a name without an area, the only row of the country iso3166.tab calls that (Iceland: IS).
 * Looser readings were tried and dropped: a part of a country's name ("Svalbard & Jan Mayen") sends
 * Atlantic/Jan_Mayen to Arctic/Longyearbyen where tzdb's backzone says Europe/Oslo.
 */
function rowsNaming(name: string, places: Places): string[] {
  const area = name.includes('/') ? name.slice(0, name.indexOf('/')) : undefined;
  const city = placeWords(name.slice(name.lastIndexOf('/') + 1));
  const cityText = city.join(' ');
  const found = new Set<string>();
  for (const row of places.rows) {
    if (area !== undefined && row.zone.startsWith(`${area}/`)) {
      const rowCity = placeWords(row.zone.slice(row.zone.lastIndexOf('/') + 1)).join(' ');
      const named = row.comments.split(/[,/;()]|\s-\s/).some((part) => part.trim() !== '' && abbreviates(placeWords(part), city));
      if (named || (cityText.length >= 4 && withinOneEdit(cityText, rowCity))) found.add(row.zone);
    }
    const country = placeWords(places.countries.get(row.country) ?? '').join(' ');
    if (area === undefined && places.rowsPerCountry.get(row.country) === 1 && country === cityText) found.add(row.zone);
  }
  return [...found];
}

/**
 * The places Debian's files cannot tell: they link to another country's zone, and no zone.tab or iso3166.tab line names
 * them. tzdb's own `backward` file (which Debian does not ship) names each with a "#= TARGET1" note, from tzdb 2026c:
 *   Link Africa/Abidjan    Africa/Timbuktu     #= Africa/Bamako
 *   Link America/Puerto_Rico America/Virgin   #= America/St_Thomas
 *   Link Europe/Berlin     Atlantic/Jan_Mayen  #= Europe/Oslo
 * Taken only when that place is listed and keeps the same clock today, like every other place rule.
 */
const PLACES_FROM_BACKWARD: Readonly<Record<string, string>> = {
  'Africa/Timbuktu': 'Africa/Bamako',
  'America/Virgin': 'America/St_Thomas',
  'Atlantic/Jan_Mayen': 'Europe/Oslo',
};

interface Aliases {
  readonly aliases: Record<string, string>;
  /** The aliases whose place differs from where their link leads, as `old -> place (link: target)`. */
  readonly byPlace: string[];
  /** Names whose place rules found several rows, none of them the link's, so the link's answer was kept. */
  readonly ambiguous: string[];
}

/**
 * Each unlisted name that stands for a listed zone. A link maps to the first listed name along its chain, unless
 * that is only where the chain ends and zone.tab names another row for the old name's place (rowsNaming) that
 * keeps the same clock today: then that row. With no listed name on the chain, a link maps to the listed name
 * that shares its final zone, because the list carries "UTC" (itself a link to Etc/UTC), so Etc/UTC and every
 * other link ending there must still map to it.
 */
function aliasesFor(zones: readonly string[], places: Places, tzdata: TzdataZi, tzdataZi: string): Aliases {
  const listed: ReadonlySet<string> = new Set(zones);
  const finalZone = (name: string): string => linkChain(name, tzdata.links, tzdataZi).at(-1)!;
  const listedByFinalZone = new Map<string, string>();
  // zones is in code-point order (UTC last), so when two listed names share an unlisted final zone the first wins.
  for (const zone of zones) {
    const last = finalZone(zone);
    if (!listed.has(last) && !listedByFinalZone.has(last)) listedByFinalZone.set(last, zone);
  }

  const result: Aliases = { aliases: {}, byPlace: [], ambiguous: [] };
  const names = [...new Set([...tzdata.links.keys(), ...listedByFinalZone.keys()])].sort();
  for (const name of names) {
    if (listed.has(name)) continue;
    const chain = linkChain(name, tzdata.links, tzdataZi);
    const last = chain.at(-1)!;
    const byLink = chain.slice(1).find((step) => listed.has(step)) ?? listedByFinalZone.get(last);
    if (byLink === undefined) continue;
    result.aliases[name] = byLink;
    // A listed name before the chain's end is tzdata's own word for the place (a link to a link): keep it.
    if (chain.slice(1, -1).includes(byLink)) continue;
    const clock = tzdata.clockToday.get(last);
    const fromBackward = PLACES_FROM_BACKWARD[name];
    const candidates = fromBackward !== undefined && listed.has(fromBackward) ? [fromBackward] : rowsNaming(name, places);
    const named = candidates.filter((zone) => clock !== undefined && tzdata.clockToday.get(finalZone(zone)) === clock);
    if (named.length === 0 || named.includes(byLink)) continue;
    if (named.length > 1) {
      result.ambiguous.push(`${name} (${named.join(', ')})`);
    } else {
      result.aliases[name] = named[0]!;
      result.byPlace.push(`${name} -> ${named[0]} (link: ${byLink})`);
    }
  }
  return result;
}

// Written beside the target and renamed so a failed run never leaves half a JSON file in src/.
function writeJsonAtomically(path: string, value: TimezoneFile): void {
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, `${JSON.stringify(value, null, 2)}\n`);
    renameSync(temporary, path);
  } catch (error) {
    throw new GeneratorError(`cannot write ${path}: ${(error as Error).message}`);
  }
}

interface Generated {
  readonly file: TimezoneFile;
  readonly read: readonly SourceFile[];
  readonly byPlace: readonly string[];
  readonly ambiguous: readonly string[];
}

function generateTimezones(options: GeneratorOptions): Generated {
  // zone.tab first: a wrong directory should be reported as a missing zone.tab, the file people know.
  const zoneTab = readSource(options.zoneinfo, 'zone.tab');
  const tzdataZi = readSource(options.zoneinfo, 'tzdata.zi');
  const iso3166Tab = readSource(options.zoneinfo, 'iso3166.tab');
  const tzdata = tzdataRelease(tzdataZi, options.expectedRelease);
  const rows = zoneTabRows(zoneTab.text, zoneTab.path);
  // Default sort is code-point order, which is stable across locales and matches what the tests assert.
  const zones = [...new Set(rows.map((row) => row.zone))].sort().concat('UTC');
  const places = placesOf(rows, countryNames(iso3166Tab.text, iso3166Tab.path));
  const { aliases, byPlace, ambiguous } = aliasesFor(zones, places, readTzdataZi(tzdataZi.text, tzdataZi.path), tzdataZi.path);
  const read = [tzdataZi, zoneTab, iso3166Tab];
  const sources = Object.fromEntries(read.map((source) => [source.name, `sha256:${source.sha256}`]));
  const file: TimezoneFile = { tzdata, sources, zones, aliases };
  writeJsonAtomically(options.out, file);
  return { file, read, byPlace, ambiguous };
}

try {
  const options = readOptions(process.argv.slice(2));
  const { file, read, byPlace, ambiguous } = generateTimezones(options);
  console.log(`read tzdata ${file.tzdata} from ${read.map((source) => source.path).join(', ')}`);
  console.log(`wrote ${file.zones.length} zones and ${Object.keys(file.aliases).length} aliases to ${options.out}`);
  console.log(`${byPlace.length} aliases name their place's zone.tab entry rather than where their link leads:`);
  for (const line of byPlace) console.log(`  ${line}`);
  for (const line of ambiguous) console.warn(`note: zone.tab names several places for ${line}; kept the link's answer`);
} catch (error) {
  const message = error instanceof GeneratorError ? error.message : String((error as Error).stack ?? error);
  console.error(`generate-timezones: ${message}`);
  process.exitCode = 1;
}
