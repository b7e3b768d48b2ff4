// Regenerates src/domain/timezones.json, the committed list of accepted IANA zone names, from a tzdb zone.tab.
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
function tzdataRelease(explicit: string | undefined, zoneTab: string): string {
  if (explicit !== undefined) {
    if (!TZDATA_RELEASE.test(explicit)) {
      throw new GeneratorError(`--version must look like a tzdata release such as 2025b, got ${JSON.stringify(explicit)}`);
    }
    return explicit;
  }
  const tzdataZi = join(dirname(zoneTab), 'tzdata.zi');
  if (!existsSync(tzdataZi)) {
    throw new GeneratorError(`no --version given and no tzdata.zi beside ${zoneTab} to read the release from; pass --version 2025b`);
  }
  const firstLine = readText(tzdataZi, 'tzdata.zi').split('\n', 1)[0] ?? '';
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
  const tzdata = tzdataRelease(options.version, options.zoneTab);
  const file: TimezoneFile = { tzdata, source: basename(options.zoneTab), zones };
  writeJsonAtomically(options.out, file);
  return file;
}

try {
  const options = readOptions(process.argv.slice(2));
  const file = generateTimezones(options);
  console.log(`wrote ${file.zones.length} zones (tzdata ${file.tzdata}) to ${options.out}`);
} catch (error) {
  const message = error instanceof GeneratorError ? error.message : String((error as Error).stack ?? error);
  console.error(`generate-timezones: ${message}`);
  process.exitCode = 1;
}
