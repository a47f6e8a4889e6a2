/**
 * Exact 64-bit integers in OTLP/JSON. The protobuf JSON mapping writes them as decimal strings but lets parsers take
 * JSON numbers too, and `JSON.parse` would round a number past 2^53 (`1700000000000000001` → `…000`). So before
 * parsing, the number literals of the four 64-bit fields a trace export has (`fixed64` `startTimeUnixNano`,
 * `endTimeUnixNano`, `Span.Event.timeUnixNano`, `int64` `AnyValue.intValue`, in either spelling; the other integers are
 * 32-bit) that a double may not hold become strings of the same text, which `integerOfText` then reads exactly.
 */

// A JSON number literal (RFC 8259 grammar, so text JSON refuses stays refused: `007` is not rewritten to `"007"`) that
// a double may not hold exactly: an integer of 16 digits or more, or any fraction or exponent (`1.7e18`, `2.0`, `1.5`,
// read exactly and refused when not an integer). Shorter integers are below 2^53 and left as numbers, so the small
// `intValue`s the JavaScript exporter writes as numbers cost no rewrite.
const INEXACT = String.raw`-?(?:[1-9]\d{15,}(?:\.\d+)?(?:[eE][+-]?\d+)?|(?:0|[1-9]\d*)(?:\.\d+(?:[eE][+-]?\d+)?|[eE][+-]?\d+))`
const WS = '[ \\t\\n\\r]*'
const MEMBER_END = `(?=${WS}[,}])`
const KEYS = [
  'startTimeUnixNano',
  'endTimeUnixNano',
  'timeUnixNano',
  'intValue',
  'start_time_unix_nano',
  'end_time_unix_nano',
  'time_unix_nano',
  'int_value',
]

// A 64-bit key, then such a literal as its value. Text inside a string never matches: its quotes are escaped, so in
// `"a \"intValue\": 1e3"` a backslash stands before the quote that must follow the name. The quote after the name is
// thus a string's delimiter; the match is a member Loom reads unless its first quote is an escaped one, and then it
// is the value of a key whose text ends in `"intValue` (`{"x \"intValue": 1e3}`), a member Loom never reads.
const INT64_MEMBER = new RegExp(`"(${KEYS.join('|')})"(${WS}:${WS})(${INEXACT})${MEMBER_END}`, 'g')

// The same members found by their last letters: a pattern starting with a literal is searched several times faster
// than one starting with `"` (every key and string starts there), so text without such a number is scanned once, fast.
const CANDIDATE = new RegExp(`(?:Nano|nano|Value|value)"${WS}:${WS}${INEXACT}${MEMBER_END}`)

/**
 * Rewrites the JSON number literals of OTLP's 64-bit fields that a double may not hold exactly as strings of the same
 * text, so that `JSON.parse` keeps their digits; text without such a number (exporters write strings) comes back as is.
 *
 * @example
 * quoteInt64Numbers('{"timeUnixNano":1700000000000000001}') // '{"timeUnixNano":"1700000000000000001"}'
 */
export function quoteInt64Numbers(text: string): string {
  return CANDIDATE.test(text) ? text.replace(INT64_MEMBER, '"$1"$2"$3"') : text
}

// What exporters send: plain digits, read without the general parse below.
const PLAIN_INTEGER = /^-?\d{1,20}$/
const NUMBER_TEXT = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/

// A 64-bit integer has at most 20 digits; a longer one is out of range whatever its sign.
const MAX_DIGITS = 20

/**
 * The integer a decimal text denotes, exactly (`"17"`, `"-4"`, `"1.7e18"`, `"2.0"`, as the protobuf JSON mapping
 * accepts integers written as numbers with a fraction or exponent); undefined when the text is no number, has a
 * fraction that is not zeros (`"1.5"`), or has more than 20 digits.
 */
export function integerOfText(text: string): bigint | undefined {
  if (PLAIN_INTEGER.test(text)) return BigInt(text)
  const parts = NUMBER_TEXT.exec(text)
  if (parts === null) return undefined
  const [, sign = '', whole = '', fraction = '', exponent = '0'] = parts
  const digits = `${whole}${fraction}`.replace(/^0+/, '')
  if (digits === '') return 0n
  // The integer part's length is checked before any string is built, so `1e999999999` or a long fraction costs little.
  const scale = Number(exponent) - fraction.length
  const kept = digits.length + scale
  if (kept > MAX_DIGITS) return undefined
  if (scale < 0) {
    if (kept <= 0 || !/^0*$/.test(digits.slice(kept))) return undefined
    return BigInt(`${sign}${digits.slice(0, kept)}`)
  }
  return BigInt(`${sign}${digits}${'0'.repeat(scale)}`)
}
