// Regenerates src/domain/timezones.json, the committed list of accepted IANA zone names, from a tzdb zone.tab,
// plus the old names tzdb keeps as links (from the tzdata.zi beside it) so suggestions can map them to current ones.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
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

const DEFAULT_ZONE_TAB = '/usr/share/zoneinfo/zone.tab';
// Resolved against the script, not the working directory, so the default lands in the repository from anywhere.
const DEFAULT_OUT = fileURLToPath(new URL('../src/domain/timezones.json', import.meta.url));
const TZDATA_RELEASE = /^\d{4}[a-z]+$/;

const USAGE =
  'usage: node scripts/generate-timezones.ts [--zone-tab /usr/share/zoneinfo/zone.tab] [--version 2025b] [--out src/domain/timezones.json]';

interface GeneratorOptions {
  readonly zoneTab: string;
  readonly version: string | undefined;
  readonly out: string;
}

interface TimezoneFile {
  readonly tzdata: string;
  readonly source: string;
  readonly zones: readonly string[];
  /** Link name -> the listed zone it stands for, keys in code-point order. */
  readonly aliases: Readonly<Record<string, string>>;
}

class GeneratorError extends Error {}

function readOptions(argv: readonly string[]): GeneratorOptions {
  try {
    const { values } = parseArgs({
      args: [...argv],
      options: {
        'zone-tab': { type: 'string', default: DEFAULT_ZONE_TAB },
        version: { type: 'string' },
        out: { type: 'string', default: DEFAULT_OUT },
      },
      strict: true,
      allowPositionals: false,
    });
    return { zoneTab: resolve(values['zone-tab']), version: values.version, out: resolve(values.out) };
  } catch (error) {
    throw new GeneratorError(`${(error as Error).message}\n${USAGE}`);
  }
}

function readText(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new GeneratorError(`cannot read ${what} at ${path}: ${(error as Error).message}`);
  }
}

// The release is part of the data: the API reports it, so it must never be guessed.
function tzdataRelease(explicit: string | undefined, tzdataZi: string, tzdataText: string | undefined, zoneTab: string): string {
  if (explicit !== undefined) {
    if (!TZDATA_RELEASE.test(explicit)) {
      throw new GeneratorError(`--version must look like a tzdata release such as 2025b, got ${JSON.stringify(explicit)}`);
    }
    return explicit;
  }
  if (tzdataText === undefined) {
    throw new GeneratorError(`no --version given and no tzdata.zi beside ${zoneTab} to read the release from; pass --version 2025b`);
  }
  const firstLine = tzdataText.split('\n', 1)[0] ?? '';
  const release = /^#\s*version\s+(\S+)\s*$/.exec(firstLine)?.[1];
  if (release === undefined || !TZDATA_RELEASE.test(release)) {
    throw new GeneratorError(
      `no --version given and the first line of ${tzdataZi} is not "# version <release>" (found ${JSON.stringify(firstLine)}); pass --version 2025b`,
    );
  }
  return release;
}

function zonesFromZoneTab(text: string, zoneTab: string): string[] {
  const names = new Set<string>();
  const lines = text.split(/\r?\n/);
  for (const [index, line] of lines.entries()) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    // Columns are tab-separated and the first three never contain spaces, so any whitespace split is safe.
    const name = line.trim().split(/\s+/)[2];
    if (name === undefined) {
      throw new GeneratorError(`${zoneTab}:${index + 1}: expected at least 3 columns (code, coordinates, TZ), got ${JSON.stringify(line)}`);
    }
    const area = name.split('/', 1)[0] ?? '';
    if (ACCEPTED_AREAS.has(area)) names.add(name);
  }
  if (names.size === 0) {
    throw new GeneratorError(`${zoneTab} has no zones in the accepted areas; is it really a zone.tab?`);
  }
  // Default sort is code-point order, which is stable across locales and matches what the tests assert.
  return [...names].sort().concat('UTC');
}

/** Link name -> target, from the `L TARGET LINKNAME` lines (zic accepts any prefix of "Link", in any case). */
function linksFromTzdataZi(text: string, tzdataZi: string): Map<string, string> {
  const links = new Map<string, string>();
  const lines = text.split(/\r?\n/);
  for (const [index, line] of lines.entries()) {
    const fields = line.replace(/#.*/, '').trim().split(/\s+/);
    const keyword = fields[0]?.toLowerCase() ?? '';
    if (keyword === '' || !'link'.startsWith(keyword)) continue;
    const [, target, name] = fields;
    if (target === undefined || name === undefined || fields.length !== 3) {
      throw new GeneratorError(`${tzdataZi}:${index + 1}: expected "L TARGET LINKNAME", got ${JSON.stringify(line)}`);
    }
    links.set(name, target);
  }
  return links;
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

/**
 * Each unlisted name that stands for a listed zone. A link maps to the first listed name along its chain;
 * failing that, to the listed name that shares its final zone, because the list carries "UTC" (itself a link
 * to Etc/UTC), so Etc/UTC and every other link ending there must still map to it.
 */
function aliasesFor(zones: readonly string[], links: ReadonlyMap<string, string>, tzdataZi: string): Record<string, string> {
  const listed: ReadonlySet<string> = new Set(zones);
  const listedByFinalZone = new Map<string, string>();
  // zones is in code-point order (UTC last), so when two listed names share an unlisted final zone the first wins.
  for (const zone of zones) {
    const finalZone = linkChain(zone, links, tzdataZi).at(-1)!;
    if (!listed.has(finalZone) && !listedByFinalZone.has(finalZone)) listedByFinalZone.set(finalZone, zone);
  }

  const aliases: Record<string, string> = {};
  const names = [...new Set([...links.keys(), ...listedByFinalZone.keys()])].sort();
  for (const name of names) {
    if (listed.has(name)) continue;
    const chain = linkChain(name, links, tzdataZi);
    const target = chain.slice(1).find((step) => listed.has(step)) ?? listedByFinalZone.get(chain.at(-1)!);
    if (target !== undefined) aliases[name] = target;
  }
  return aliases;
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

function generateTimezones(options: GeneratorOptions): TimezoneFile {
  // zone.tab first: a wrong path should be reported as such, not as a missing tzdata.zi beside it.
  const zones = zonesFromZoneTab(readText(options.zoneTab, 'zone.tab'), options.zoneTab);
  const tzdataZi = join(dirname(options.zoneTab), 'tzdata.zi');
  // Optional once --version is given: without it there are simply no aliases to offer.
  const tzdataText = existsSync(tzdataZi) ? readText(tzdataZi, 'tzdata.zi') : undefined;
  const tzdata = tzdataRelease(options.version, tzdataZi, tzdataText, options.zoneTab);
  const aliases = tzdataText === undefined ? {} : aliasesFor(zones, linksFromTzdataZi(tzdataText, tzdataZi), tzdataZi);
  const file: TimezoneFile = { tzdata, source: basename(options.zoneTab), zones, aliases };
  writeJsonAtomically(options.out, file);
  return file;
}

try {
  const options = readOptions(process.argv.slice(2));
  const file = generateTimezones(options);
  console.log(
    `wrote ${file.zones.length} zones and ${Object.keys(file.aliases).length} aliases (tzdata ${file.tzdata}) to ${options.out}`,
  );
} catch (error) {
  const message = error instanceof GeneratorError ? error.message : String((error as Error).stack ?? error);
  console.error(`generate-timezones: ${message}`);
  process.exitCode = 1;
}
