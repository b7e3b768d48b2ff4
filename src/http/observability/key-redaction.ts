// Keeps API keys out of what is echoed and logged: spots client text that could carry a key, in clear or encoded.
import { ADMIN_TOKEN_PREFIXES, parseAdminToken } from '../../domain/admin-tokens.ts';
import { KEY_PREFIXES, parseKey } from '../../domain/api-keys.ts';

const KEY_BODY_LENGTH = 50; // key id + secret + checksum, after the prefix
const KEY_MARK_ANY_CASE = /aapi_/i;
const HAS_BASE62_RUN = new RegExp(`[0-9A-Za-z]{${KEY_BODY_LENGTH}}`);
const BASE62_RUN = new RegExp(`[0-9A-Za-z]{${KEY_BODY_LENGTH},}`, 'g');
// Any run that could be base64 (standard or URL-safe), wherever it sits.
const BASE64_RUN = /[A-Za-z0-9+/_-]{16,}={0,2}/g;
const LONGEST_CHECKED = 4096;
const LONGEST_LOGGED_PATH = 256;
const KEY_SCAN_MARGIN = 80; // longer than any key, encoded or not

function percentDecoded(text: string): string {
  return text.replace(/%([0-9A-Fa-f]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/** Even with its prefix cut off: the checksum makes a false alarm practically impossible. */
function holdsKeyBody(text: string): boolean {
  if (!HAS_BASE62_RUN.test(text)) return false;
  for (const [run] of text.matchAll(BASE62_RUN)) {
    for (let start = 0; start + KEY_BODY_LENGTH <= run.length; start++) {
      const body = run.slice(start, start + KEY_BODY_LENGTH);
      if (Object.values(KEY_PREFIXES).some((prefix) => parseKey(prefix + body).ok)) return true;
      if (Object.values(ADMIN_TOKEN_PREFIXES).some((prefix) => parseAdminToken(prefix + body) !== null)) return true;
    }
  }
  return false;
}

function holdsInClear(text: string): boolean {
  return KEY_MARK_ANY_CASE.test(text) || holdsKeyBody(text);
}

function holdsInClearOrBase64(text: string): boolean {
  if (holdsInClear(text)) return true;
  for (const [run] of text.matchAll(BASE64_RUN)) {
    // Every alignment, so base64 starting mid-group (a fragment of a Basic header) is caught too.
    for (let shift = 0; shift < 4; shift++) {
      if (holdsInClear(Buffer.from(run.slice(shift), 'base64').toString('latin1'))) return true;
    }
  }
  return false;
}

/** The `aapi_` mark or a checksummed body, in clear or base64, as sent or percent-decoded (twice); too long: assumed to. */
export function mayHoldKey(text: string): boolean {
  if (text.length > LONGEST_CHECKED) return true;
  if (plainlyKeyless(text)) return false;
  return scannedForKey(text);
}

const SHORTEST_RUN = 16;

/**
 * None of what scannedForKey looks for (no SHORTEST_RUN base64 run, no `aapi_` mark, no `%`), in one pass over character
 * codes: the request log asks this of every path, where the full scan built a regular expression per call.
 */
export function plainlyKeyless(text: string): boolean {
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 37) return false; // '%'
    const inRun = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 47 || c === 95 || c === 45;
    run = inRun ? run + 1 : 0;
    if (run >= SHORTEST_RUN) return false;
    // `aapi_` in any case, found at its underscore (`| 0x20` folds only the letters that matter to lower case).
    if (c === 95 && i >= 4 && (text.charCodeAt(i - 4) | 0x20) === 97 && (text.charCodeAt(i - 3) | 0x20) === 97 && (text.charCodeAt(i - 2) | 0x20) === 112 && (text.charCodeAt(i - 1) | 0x20) === 105) {
      return false;
    }
  }
  return true;
}

/** The full scan behind mayHoldKey (exported for the test that holds the two together). */
export function scannedForKey(text: string): boolean {
  if (holdsInClearOrBase64(text)) return true;
  if (!text.includes('%')) return false;
  const once = percentDecoded(text);
  return holdsInClearOrBase64(once) || (once.includes('%') && holdsInClearOrBase64(percentDecoded(once)));
}

/**
 * Performance trick (keyless paths remembered). Relies on: the scan's verdict being a property of the text alone, and only
 * keyless text being kept. Guarded by: test/unit/http/observability/key-redaction.test.ts.
 * Figures: docs/operations.md#keyless-paths-remembered
 */
const keylessPaths = new Set<string>();
const MOST_KEYLESS_PATHS_KEPT = 512;

function keylessPath(path: string): boolean {
  if (path.length > LONGEST_CHECKED) return false;
  if (plainlyKeyless(path) || keylessPaths.has(path)) return true;
  if (scannedForKey(path)) return false;
  if (keylessPaths.size >= MOST_KEYLESS_PATHS_KEPT) keylessPaths.clear();
  // A copy: `path` is often a slice of the request's URL, which V8 keeps whole (query string and all) while the slice lives.
  keylessPaths.add(Buffer.from(path, 'utf16le').toString('utf16le'));
  return true;
}

function endOfPath(url: string): number {
  for (let i = 0; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c === 63 || c === 35) return i; // '?', '#'
  }
  return url.length;
}

/** No query string, at most 256 characters, any segment that could carry a key redacted. */
export function loggablePath(url: string): string {
  const end = endOfPath(url);
  // Only the loggable part (plus a key's length) is scanned: a long path must not cost a long scan on unbudgeted requests.
  const whole = end === url.length ? url : url.slice(0, end);
  const path = whole.length > LONGEST_LOGGED_PATH + KEY_SCAN_MARGIN ? whole.slice(0, LONGEST_LOGGED_PATH + KEY_SCAN_MARGIN) : whole;
  let clean = path;
  if (!keylessPath(path)) {
    // Everything from the first suspect segment on: base64 holds '/', so a key can spread over several segments.
    const segments = path.split('/');
    const first = segments.findIndex((segment) => mayHoldKey(segment));
    clean = [...segments.slice(0, Math.max(first, 0)), '[redacted]'].join('/');
  }
  return clean.length > LONGEST_LOGGED_PATH ? `${clean.slice(0, LONGEST_LOGGED_PATH)}...` : clean;
}

/** A key pasted into the user part must not be logged. */
export function loggableUsername(username: string): string {
  return /^[A-Za-z0-9._-]{1,64}$/.test(username) && !mayHoldKey(username) ? username : '[redacted]';
}
