// The IANA time zone names the API accepts, and "did you mean" suggestions for names it does not.
import data from './timezones.json' with { type: 'json' };

export interface TimezoneCatalog {
  /** Such as 2026f, read from tzdata.zi by the generator. */
  readonly tzdata: string;
  readonly zones: readonly string[];
  /** Exact and case-sensitive: `Europe/Paris` is a zone, `europe/paris` is a request to correct. */
  has(name: string): boolean;
  /** Best first; empty when nothing is close. Another case or an old linked name (Europe/Kiev) yields only its target. */
  suggest(input: string, limit?: number): string[];
}

// Longer than any real zone name: past it the input is not a typo, and distances would only spend our CPU.
const MAX_SUGGESTION_INPUT = 64;

const DEFAULT_SUGGESTION_LIMIT = 3;

interface SuggestionIndex {
  readonly zones: readonly IndexedZone[];
  readonly zoneByLowerName: ReadonlyMap<string, string>;
  readonly aliasTargetByLowerName: ReadonlyMap<string, string>;
}

interface IndexedZone {
  readonly name: string;
  readonly lowerName: string;
  readonly lowerLastSegment: string;
}

interface Ranked {
  readonly name: string;
  readonly distance: number;
}

/** How many names the catalog lists: GET /settings/timezones answers no more. */
export const TIMEZONE_COUNT = data.zones.length;

/** Regenerate timezones.json with `npm run tz:generate`. */
export function loadTimezoneCatalog(): TimezoneCatalog {
  return createTimezoneCatalog(data.tzdata, data.zones, data.aliases);
}

/** `aliases` only feed suggestions; `has` accepts listed names alone. */
export function createTimezoneCatalog(
  tzdata: string,
  zones: readonly string[],
  aliases: Readonly<Record<string, string>> = {},
): TimezoneCatalog {
  const frozenZones = Object.freeze([...zones]);
  const known: ReadonlySet<string> = new Set(frozenZones);
  const index = buildSuggestionIndex(frozenZones, known, aliases);

  return Object.freeze({
    tzdata,
    zones: frozenZones,
    has: (name: string): boolean => known.has(name),
    suggest: (input: string, limit: number = DEFAULT_SUGGESTION_LIMIT): string[] => suggestZones(index, input, limit),
  });
}

function buildSuggestionIndex(
  zones: readonly string[],
  known: ReadonlySet<string>,
  aliases: Readonly<Record<string, string>>,
): SuggestionIndex {
  const indexed = zones.map((name): IndexedZone => {
    const lowerName = name.toLowerCase();
    return { name, lowerName, lowerLastSegment: lastSegment(lowerName) };
  });
  const zoneByLowerName = new Map<string, string>();
  for (const zone of indexed) if (!zoneByLowerName.has(zone.lowerName)) zoneByLowerName.set(zone.lowerName, zone.name);
  const aliasTargetByLowerName = new Map<string, string>();
  for (const [alias, target] of Object.entries(aliases)) {
    // A suggestion the API would reject is worse than none.
    const lowerAlias = alias.toLowerCase();
    if (known.has(target) && !aliasTargetByLowerName.has(lowerAlias)) aliasTargetByLowerName.set(lowerAlias, target);
  }
  return { zones: indexed, zoneByLowerName, aliasTargetByLowerName };
}

function suggestZones(index: SuggestionIndex, input: string, limit: number): string[] {
  if (input.length > MAX_SUGGESTION_INPUT || !(limit >= 1)) return [];
  // People type "New York" for "New_York"; zone names never contain spaces.
  const wanted = input.trim().replace(/\s+/g, '_').toLowerCase();
  if (wanted === '') return [];
  const certain = index.zoneByLowerName.get(wanted) ?? index.aliasTargetByLowerName.get(wanted);
  if (certain !== undefined) return [certain];

  const wantedLastSegment = lastSegment(wanted);
  const fullBudget = distanceBudget(wanted);
  const segmentBudget = distanceBudget(wantedLastSegment);

  const ranked: Ranked[] = [];
  for (const zone of index.zones) {
    // The full name catches typos anywhere; the last segment a bare city or a wrong sub-area (America/Vevay).
    const distance = Math.min(
      boundedDistance(wanted, zone.lowerName, fullBudget),
      boundedDistance(wantedLastSegment, zone.lowerLastSegment, segmentBudget),
    );
    if (Number.isFinite(distance)) ranked.push({ name: zone.name, distance });
  }

  ranked.sort(byCloseness);
  const best = ranked[0];
  if (best === undefined) return [];
  // Only the near-best, so "paris" is not followed by far matches ("Antarctica/Davis").
  return ranked
    .filter((candidate) => candidate.distance <= best.distance + 1)
    .slice(0, Math.floor(limit))
    .map((candidate) => candidate.name);
}

function byCloseness(a: Ranked, b: Ranked): number {
  if (a.distance !== b.distance) return a.distance - b.distance;
  // Code-point order, not localeCompare: the same answer on every machine.
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

// Short inputs get a floor of 2 so a single transposition ("Lodnon") still finds its zone.
function distanceBudget(text: string): number {
  return Math.max(2, Math.floor(text.length / 3));
}

/** Infinity past the budget; the length gap alone rules most names out. */
function boundedDistance(a: string, b: string, budget: number): number {
  if (Math.abs(a.length - b.length) > budget) return Number.POSITIVE_INFINITY;
  const distance = levenshtein(a, b);
  return distance <= budget ? distance : Number.POSITIVE_INFINITY;
}

function lastSegment(name: string): string {
  return name.slice(name.lastIndexOf('/') + 1);
}

export function levenshtein(a: string, b: string): number {
  const source = Array.from(a);
  const target = Array.from(b);
  if (source.length === 0) return target.length;
  if (target.length === 0) return source.length;

  let previous = new Uint32Array(target.length + 1).map((_, index) => index);
  let current = new Uint32Array(target.length + 1);
  for (let i = 1; i <= source.length; i++) {
    current[0] = i;
    const sourceChar = source[i - 1];
    for (let j = 1; j <= target.length; j++) {
      const substitution = sourceChar === target[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + substitution);
    }
    [previous, current] = [current, previous];
  }
  return previous[target.length]!;
}
