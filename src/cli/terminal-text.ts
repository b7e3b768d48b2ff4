// What the command line prints of stored text, made unable to drive a terminal: control characters become visible escapes.

/**
 * C0 controls (ESC, CR, BEL, line breaks, tabs), DEL, C1 controls (U+009B is a CSI to some terminals), the line and paragraph
 * separators, and the bidi controls that reorder what is shown (Trojan Source: U+202A-U+202E, U+2066-U+2069, and the marks
 * U+200E, U+200F, U+061C). A stored value from an older version, or one written behind the API, may hold any of them.
 */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** The ones JSON.stringify leaves as they are (it escapes C0 itself, as \n or \u001b). */
const CONTROLS_LEFT_BY_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

function hex(character: string, digits: number): string {
  return character.charCodeAt(0).toString(16).padStart(digits, '0');
}

/**
 * `\x1b` for a control up to U+00FF, `\u202e` above; every other character as it is (accents, scripts, emoji, backslashes).
 * A backslash is not doubled, so the output of `\x1b` typed as four characters reads the same; --json shows the exact value.
 */
export function terminalText(text: string): string {
  return text.replace(CONTROLS, (character) => (character.charCodeAt(0) <= 0xff ? `\\x${hex(character, 2)}` : `\\u${hex(character, 4)}`));
}

/** JSON.stringify's output with the controls it leaves raw written as \uXXXX: the same JSON value, safe on a terminal. */
export function terminalJson(json: string): string {
  return json.replace(CONTROLS_LEFT_BY_JSON, (character) => `\\u${hex(character, 4)}`);
}
