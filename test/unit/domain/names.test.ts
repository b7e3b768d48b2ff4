// Protects the username and display-name rules: what is accepted, what is refused, and that names are kept exactly.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { DomainError } from '../../../src/domain/errors.ts';
import { checkDisplayName, checkUsername, checkUsernamePrefix } from '../../../src/domain/names.ts';

function assertInvalid(check: () => unknown, code: string, field: string, what: string): void {
  assert.throws(
    check,
    (error: unknown) => {
      assert.ok(error instanceof DomainError, `${what}: expected a DomainError, got ${String(error)}`);
      assert.equal(error.kind, 'invalid', `${what}: wrong kind`);
      assert.equal(error.code, code, `${what}: wrong code`);
      assert.equal(error.field, field, `${what}: wrong field`);
      assert.ok(error.message.length > 0, `${what}: empty message`);
      return true;
    },
    `${what} was accepted`,
  );
}

describe('usernames', () => {
  test('accepts letters, digits, dot, underscore and hyphen', () => {
    for (const username of ['a', 'Z', '7', 'alice', 'Alice.Smith', 'bob_2', 'carol-d', '.x', '_1', 'a-', 'a.b_c-D9']) {
      assert.equal(checkUsername(username), username, `'${username}' was not accepted unchanged`);
    }
  });

  test('accepts 1 and 64 characters', () => {
    assert.equal(checkUsername('x'), 'x');
    const longest = 'a'.repeat(64);
    assert.equal(checkUsername(longest), longest, 'a 64-character username was refused');
  });

  test('refuses 65 characters', () => {
    assertInvalid(() => checkUsername('a'.repeat(65)), 'invalid_username', 'username', 'a 65-character username');
  });

  test('refuses the empty username', () => {
    assertInvalid(() => checkUsername(''), 'invalid_username', 'username', 'an empty username');
  });

  test('refuses a colon, which Basic credentials cannot carry', () => {
    assertInvalid(() => checkUsername('ali:ce'), 'invalid_username', 'username', "'ali:ce'");
    assertInvalid(() => checkUsername(':'), 'invalid_username', 'username', "':'");
  });

  test('refuses spaces and other punctuation', () => {
    for (const username of ['ali ce', ' alice', 'alice ', 'alice\t', 'alice\n', 'al@ce', 'a/b', 'a+b', "o'neil"]) {
      assertInvalid(() => checkUsername(username), 'invalid_username', 'username', JSON.stringify(username));
    }
  });

  test('refuses non-ASCII letters and digits', () => {
    for (const username of ['jürgen', 'josé', 'алиса', '山田', 'ａｌｉｃｅ', '١٢٣', 'e\u0301']) {
      assertInvalid(() => checkUsername(username), 'invalid_username', 'username', JSON.stringify(username));
    }
  });

  test('refuses a username of punctuation alone, which a URL-normalising client cannot address', () => {
    // fetch turns /admin/v0/accounts/. into /admin/v0/accounts/ (the list) and /accounts/.. into /admin/v0/.
    for (const username of ['.', '..', '...', '-', '--', '_', '._-', '-.-']) {
      assertInvalid(() => checkUsername(username), 'invalid_username', 'username', JSON.stringify(username));
    }
    for (const username of ['a.', '.a', '-1', '_x_', 'a..b', '0']) assert.equal(checkUsername(username), username);
  });

  test('reports the field name the caller gives', () => {
    assertInvalid(() => checkUsername('bad name', 'user'), 'invalid_username', 'user', "'bad name' with field 'user'");
  });
});

describe('display names', () => {
  test('accepts a single character', () => {
    assert.equal(checkDisplayName('A'), 'A');
    assert.equal(checkDisplayName('😀'), '😀');
  });

  test('accepts 100 code points', () => {
    const name = 'n'.repeat(100);
    assert.equal(checkDisplayName(name), name, 'a 100-character name was refused');
  });

  test('counts code points, not UTF-16 units: 100 emoji (200 units) are accepted', () => {
    const name = '😀'.repeat(100);
    assert.equal(name.length, 200, 'test setup: 100 emoji should be 200 UTF-16 units');
    assert.equal(checkDisplayName(name), name, '100 emoji were refused');
  });

  test('refuses 101 code points', () => {
    assertInvalid(() => checkDisplayName('n'.repeat(101)), 'invalid_name', 'name', 'a 101-character name');
    assertInvalid(() => checkDisplayName('😀'.repeat(101)), 'invalid_name', 'name', '101 emoji');
    assertInvalid(() => checkDisplayName('😀'.repeat(100) + 'x'), 'invalid_name', 'name', '100 emoji and a letter');
  });

  test('refuses the empty name', () => {
    assertInvalid(() => checkDisplayName(''), 'invalid_name', 'name', 'an empty name');
  });

  test('refuses a name made only of whitespace', () => {
    const cases: Record<string, string> = {
      'one space': ' ',
      'only spaces': '     ',
      'only ideographic spaces (U+3000)': '\u3000\u3000',
      'only no-break spaces (U+00A0)': '\u00A0\u00A0\u00A0',
      'mixed spaces': ' \u00A0\u3000 ',
    };
    for (const [label, name] of Object.entries(cases)) {
      assertInvalid(() => checkDisplayName(name), 'invalid_name', 'name', label);
    }
  });

  test('refuses control characters and line separators anywhere in the name', () => {
    const cases: Record<string, string> = {
      tab: '\t',
      newline: '\n',
      'carriage return': '\r',
      'U+0000': '\u0000',
      'U+001B (escape)': '\u001B',
      'U+007F (delete)': '\u007F',
      'U+0085 (next line)': '\u0085',
      'U+009F': '\u009F',
      'U+2028 (line separator)': '\u2028',
      'U+2029 (paragraph separator)': '\u2029',
    };
    for (const [label, char] of Object.entries(cases)) {
      assertInvalid(() => checkDisplayName(`Ann${char}Lee`), 'invalid_name', 'name', `a name containing ${label}`);
      assertInvalid(() => checkDisplayName(`Ann Lee${char}`), 'invalid_name', 'name', `a name ending with ${label}`);
    }
  });

  test('refuses a name with nothing visible: only zero-width, format, filler or direction characters', () => {
    const cases: Record<string, string> = {
      'U+200B zero width space': '\u200B',
      'U+200C/U+200D joiners': '\u200C\u200D',
      'U+2060 word joiner': '\u2060',
      'U+FEFF byte order mark': '\uFEFF',
      'U+00AD soft hyphen alone': '\u00AD',
      'U+3164 Hangul filler': '\u3164\u3164',
      'U+115F/U+1160 Hangul fillers': '\u115F\u1160',
      'U+FFA0 halfwidth Hangul filler': '\uFFA0',
      'U+200E/U+200F direction marks': '\u200E\u200F',
      'U+034F combining grapheme joiner': '\u034F',
      'combining marks alone': '\u0301\u0308',
      'spaces and zero-width spaces': ' \u200B \u200B',
      'U+2800 braille pattern blank': '\u2800\u2800',
      'U+1D159 musical symbol null notehead': '\u{1D159}',
      'U+0378, unassigned': '\u0378',
      'U+FFFF, a noncharacter': '\uFFFF',
    };
    for (const [label, name] of Object.entries(cases)) {
      assertInvalid(() => checkDisplayName(name), 'invalid_name', 'name', label);
    }
  });

  test('refuses bidirectional embeddings, overrides and isolates anywhere, even in a visible name', () => {
    for (let code = 0x202a; code <= 0x202e; code++) {
      const char = String.fromCodePoint(code);
      assertInvalid(() => checkDisplayName(char), 'invalid_name', 'name', `U+${code.toString(16)} alone`);
      assertInvalid(() => checkDisplayName(`Ann${char}Lee`), 'invalid_name', 'name', `U+${code.toString(16)} inside a name`);
    }
    for (let code = 0x2066; code <= 0x2069; code++) {
      const char = String.fromCodePoint(code);
      assertInvalid(() => checkDisplayName(`Ann${char}Lee${char}`), 'invalid_name', 'name', `U+${code.toString(16)} inside a name`);
    }
  });

  test('keeps zero-width joiners, direction marks and soft hyphens inside a visible name', () => {
    for (const name of ['👩\u200D💻', 'Ann\u00ADLee', '\u200Fמרים', 'Ann\u200BLee', 'اسم\u200E']) {
      assert.equal(checkDisplayName(name), name, `${JSON.stringify(name)} was not accepted unchanged`);
    }
  });

  test('keeps leading and trailing spaces exactly as sent', () => {
    for (const name of ['  Ann Lee', 'Ann Lee  ', '  Ann  Lee  ', '\u3000Ann\u3000', '\u00A0Ann']) {
      assert.equal(checkDisplayName(name), name, `${JSON.stringify(name)} was not returned unchanged`);
    }
  });

  test('accepts letters from any script, emoji and combining marks unchanged', () => {
    for (const name of ['Zoë Ångström', 'Иван Петров', '山田太郎', 'e\u0301', '👩‍💻 dev', 'O’Brien-Smith']) {
      assert.equal(checkDisplayName(name), name, `${JSON.stringify(name)} was not accepted unchanged`);
    }
  });

  test('reports the field name the caller gives', () => {
    assertInvalid(() => checkDisplayName('', 'display_name'), 'invalid_name', 'display_name', "'' with field 'display_name'");
  });
});

describe('username prefixes (the admin search)', () => {
  test('accepts 1 to 64 characters of the username alphabet, also only a separator, and keeps them as given', () => {
    for (const prefix of ['a', 'ALI', 'a_', '_', '.', '-', 'x'.repeat(64), 'Alice.Liddell-2_']) assert.equal(checkUsernamePrefix(prefix), prefix);
  });

  test('refuses the empty text, 65 characters, spaces, LIKE and glob wildcards and anything outside ASCII', () => {
    for (const prefix of ['', 'x'.repeat(65), 'a b', '%', 'a%', '*', 'a\\', "a'", 'é', 'a:b']) {
      assertInvalid(() => checkUsernamePrefix(prefix), 'invalid_username_prefix', 'username_prefix', JSON.stringify(prefix));
    }
    assertInvalid(() => checkUsernamePrefix('%', 'prefix'), 'invalid_username_prefix', 'prefix', 'the field named by the caller');
  });
});
