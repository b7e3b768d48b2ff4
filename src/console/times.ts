// How the console shows an instant: a <time> whose text is its UTC date and minute (2026-11-27 21:52 UTC), with the exact
// instant, milliseconds and all, in its datetime attribute and its tooltip (docs/console.md, Times).

/** An instant as the store and the admin API write it (2026-11-27T21:52:28.851Z, or with an offset). */
const INSTANT_TEXT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

const ENTITIES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escaped(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ENTITIES[character]!);
}

/** Whether a value (an audit entry's old or new value, say) is an instant, to be shown as one. */
export function isInstant(value: unknown): value is string {
  return typeof value === 'string' && INSTANT_TEXT.test(value) && !Number.isNaN(Date.parse(value));
}

/**
 * The markup for `iso`: UTC, as the usage table's days and the audit trail's filters are, and to the minute (the tooltip has
 * the rest). Anything that is not an instant is shown as the escaped text it is, never dropped.
 */
export function timeElement(iso: string): string {
  if (!isInstant(iso)) return escaped(iso);
  const exact = new Date(iso).toISOString();
  // Two pieces the stylesheet keeps whole: in a narrow column the text wraps between the date and the time, nowhere else.
  return `<time datetime="${exact}" title="${exact}"><span>${exact.slice(0, 10)}</span> <span>${exact.slice(11, 16)} UTC</span></time>`;
}

/** An audit change's value: an instant as timeElement shows it, anything else as escaped text, absent as a dash. */
export function valueElement(value: unknown): string {
  if (value === null || value === undefined) return '–';
  return isInstant(value) ? timeElement(value) : escaped(String(value));
}
