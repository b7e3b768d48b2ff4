// The one escaping of printed text: every character that can drive a terminal becomes visible, every other stays as it was.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { terminalJson, terminalText } from '../../../src/cli/terminal-text.ts';

test('C0 controls, DEL and C1 controls become \\xHH', () => {
  for (let code = 0; code <= 0x9f; code += 1) {
    if (code >= 0x20 && code < 0x7f) continue;
    assert.equal(terminalText(String.fromCharCode(code)), `\\x${code.toString(16).padStart(2, '0')}`, `U+${code.toString(16)}`);
  }
});

test('bidi controls and the line and paragraph separators become \\uHHHH', () => {
  const codes = [0x061c, 0x200e, 0x200f, 0x2028, 0x2029, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069];
  for (const code of codes) assert.equal(terminalText(String.fromCharCode(code)), `\\u${code.toString(16).padStart(4, '0')}`, `U+${code.toString(16)}`);
});

test('ordinary text is left as it is: accents, other scripts, emoji, joiners, backslashes', () => {
  for (const text of ['Zoë Ångström', '東京 Москва القاهرة', '😀 👩‍💻 🇫🇷', 'C:\\path\\to', 'tab-free "quotes" and <tags>']) {
    assert.equal(terminalText(text), text);
  }
});

test('terminalJson escapes what JSON.stringify leaves raw, and the JSON still parses to the same value', () => {
  const value = { name: 'a\u001b[2Jb\u009bc\u202ed\u2028e\u007ff é' };
  const json = terminalJson(JSON.stringify(value));
  assert.doesNotMatch(json, /[\u0000-\u001f\u007f-\u009f\u202e\u2028]/);
  assert.deepEqual(JSON.parse(json), value);
});
