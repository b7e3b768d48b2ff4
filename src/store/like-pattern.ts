// A LIKE pattern matching what starts with a given text, on both engines: its `%`, `_` and `\` taken as themselves.

/** Use with `LIKE ? ESCAPE '\'`: `a_` becomes `a\_%`, so it matches `a_b` and not `abc`. */
export function likePrefix(prefix: string): string {
  return `${prefix.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}
