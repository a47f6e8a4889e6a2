// An operator's JSON file (`LOOM_MODELS_FILE`, `LOOM_PRICES_FILE`, `npm run models -- import`) may hold a pasted
// credential, and Node's `JSON.parse` message quotes the text around a bad token (`Unexpected token 'k', "sk-live-…"
// is not valid JSON`). A syntax error is reported by its line and column only, so that no part of the file reaches
// a terminal or a log.

/** A JSON file that does not parse; its message names the source and the line and column, never the file's text. */
export class JsonSyntaxError extends SyntaxError {
  override readonly name = 'JsonSyntaxError'
}

// One JSON scalar at the start of the rest: a string (no raw control characters, only JSON's escapes), a number,
// or a literal.
const SCALAR =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: JSON strings may not hold raw U+0000–U+001F.
  /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null/y
// biome-ignore lint/suspicious/noControlCharactersInRegex: as in SCALAR.
const KEY = /"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/y
const WHITESPACE = /[ \t\n\r]*/y

/**
 * The offset of the first JSON syntax error in `text` (where the token that cannot stand there starts, or the text's
 * length when it ends too early), or -1 when `text` is valid JSON. Iterative, so deep nesting cannot overflow.
 *
 * @example jsonSyntaxErrorAt('{"a": 1,}') // 8
 */
export function jsonSyntaxErrorAt(text: string): number {
  // The closing bracket each open array or object waits for.
  const open: string[] = []
  // `value`: a value; `first`: a value or `]`; `firstKey`: a key or `}`; `key`; `colon`; `after`: `,`, a closing
  // bracket, or the end.
  let expect: 'value' | 'first' | 'firstKey' | 'key' | 'colon' | 'after' = 'value'
  let i = 0
  const match = (pattern: RegExp): boolean => {
    pattern.lastIndex = i
    if (!pattern.test(text)) return false
    i = pattern.lastIndex
    return true
  }
  for (;;) {
    match(WHITESPACE)
    if (i >= text.length) return expect === 'after' && open.length === 0 ? -1 : i
    const ch = text[i]
    const closing = open.at(-1)
    if ((expect === 'first' && ch === ']') || (expect === 'firstKey' && ch === '}')) {
      open.pop()
      i++
      expect = 'after'
    } else if (expect === 'value' || expect === 'first') {
      if (ch === '[' || ch === '{') {
        open.push(ch === '[' ? ']' : '}')
        i++
        expect = ch === '[' ? 'first' : 'firstKey'
      } else if (match(SCALAR)) expect = 'after'
      else return i
    } else if (expect === 'key' || expect === 'firstKey') {
      if (!match(KEY)) return i
      expect = 'colon'
    } else if (expect === 'colon') {
      if (ch !== ':') return i
      i++
      expect = 'value'
    } else if (closing !== undefined && ch === ',') {
      i++
      expect = closing === ']' ? 'value' : 'key'
    } else if (closing !== undefined && ch === closing) {
      open.pop()
      i++
    } else return i
  }
}

/** The 1-based line and column of an offset in `text`. */
function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset)
  const lineStart = before.lastIndexOf('\n') + 1
  return { line: before.split('\n').length, column: offset - lineStart + 1 }
}

/**
 * `JSON.parse` for an operator's file: a syntax error throws `JsonSyntaxError` saying `<source> is not valid JSON
 * (line L, column C)`, without the parse error as its cause, so neither its message nor a logged cause holds any of
 * the file's text.
 *
 * @example parseJsonFile('{"key": sk-live-1}', 'models.json') // throws "models.json is not valid JSON (line 1, column 9)"
 */
export function parseJsonFile(text: string, source: string): unknown {
  try {
    return JSON.parse(text)
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error
  }
  const at = jsonSyntaxErrorAt(text)
  // JSON.parse refused the text, so the scan finds an error; should the two ever disagree, say so without a place.
  if (at < 0) throw new JsonSyntaxError(`${source} is not valid JSON`)
  const { line, column } = lineAndColumn(text, at)
  throw new JsonSyntaxError(`${source} is not valid JSON (line ${line}, column ${column})`)
}
