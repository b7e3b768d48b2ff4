// Regenerates src/domain/timezones.json, the committed list of accepted IANA zone names, from one zoneinfo directory:
// zone.tab for the list, and tzdata.zi beside it for the release and the old names tzdb keeps as links.
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
  /** Link name -> the listed zone it stands for, keys in code-point order. */
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

function generateTimezones(options: GeneratorOptions): { file: TimezoneFile; read: readonly SourceFile[] } {
  // zone.tab first: a wrong directory should be reported as a missing zone.tab, the file people know.
  const zoneTab = readSource(options.zoneinfo, 'zone.tab');
  const tzdataZi = readSource(options.zoneinfo, 'tzdata.zi');
  const tzdata = tzdataRelease(tzdataZi, options.expectedRelease);
  const zones = zonesFromZoneTab(zoneTab.text, zoneTab.path);
  const aliases = aliasesFor(zones, linksFromTzdataZi(tzdataZi.text, tzdataZi.path), tzdataZi.path);
  const read = [tzdataZi, zoneTab];
  const sources = Object.fromEntries(read.map((source) => [source.name, `sha256:${source.sha256}`]));
  const file: TimezoneFile = { tzdata, sources, zones, aliases };
  writeJsonAtomically(options.out, file);
  return { file, read };
}

try {
  const options = readOptions(process.argv.slice(2));
  const { file, read } = generateTimezones(options);
  console.log(`read tzdata ${file.tzdata} from ${read.map((source) => source.path).join(', ')}`);
  console.log(`wrote ${file.zones.length} zones and ${Object.keys(file.aliases).length} aliases to ${options.out}`);
} catch (error) {
  const message = error instanceof GeneratorError ? error.message : String((error as Error).stack ?? error);
  console.error(`generate-timezones: ${message}`);
  process.exitCode = 1;
}
