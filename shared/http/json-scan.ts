/** What one pass over a JSON text found (`scanJson`). */
export type JsonScan = {
  /** Index of the first bracket that nests deeper than the limit, or -1. */
  tooDeep: number
  /**
   * When the text is an object with an array member named `key`: that array's elements as written, without the
   * whitespace around each. Of duplicate members the last array wins, as `JSON.parse` keeps the last duplicate key
   * (a later non-array duplicate is not seen: the parsed value then fails validation). Else undefined.
   */
  elements: string[] | undefined
}

// Whether the string token text[start..end] (quotes included) is `key`, escapes decoded (`"trajectory\u005fgroups"`).
function isKey(text: string, start: number, end: number, key: string): boolean {
  const raw = text.slice(start + 1, end)
  return raw === key || (raw.includes('\\') && JSON.parse(text.slice(start, end + 1)) === key)
}

/**
 * One pass over a valid JSON text (it was parsed already; the scan checks no syntax): finds where arrays and objects
 * first nest deeper than `limit`, and, given `key`, cuts the elements of the root object's array member `key` out of
 * the text, so they can be kept exactly as sent (`JSON.stringify` of the parsed value would round integers above
 * 2^53 and write `1.0` as `1`). Brackets, commas and quotes inside strings do not count.
 *
 * @example scanJson('{"a": [1, {"b": "]"} ]}', 200, 'a').elements // ['1', '{"b": "]"}']
 */
export function scanJson(text: string, limit: number, key?: string): JsonScan {
  let depth = 0
  let objectRoot = false
  // The last string at depth 1. In an object, the string before a value's opening bracket is that member's key.
  let keyStart = 0
  let keyEnd = 0
  let elements: string[] | undefined
  // The elements of the member being read, and where the current one starts (whitespace included, trimmed later).
  let current: string[] | undefined
  let from = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === 0x22) {
      const start = i
      // Skips a string, escapes included.
      for (i++; i < text.length; i++) {
        const inner = text.charCodeAt(i)
        if (inner === 0x5c) i++
        else if (inner === 0x22) break
      }
      if (depth === 1) {
        keyStart = start
        keyEnd = i
      }
    } else if (code === 0x5b || code === 0x7b) {
      if (++depth > limit) return { tooDeep: i, elements: undefined }
      if (depth === 1) objectRoot = code === 0x7b
      else if (depth === 2 && code === 0x5b && objectRoot && key !== undefined && isKey(text, keyStart, keyEnd, key)) {
        current = []
        from = i + 1
      }
    } else if (code === 0x5d || code === 0x7d) {
      // At depth 2 inside the member's array, the only closing bracket is the array's own.
      if (depth === 2 && current !== undefined) {
        const last = text.slice(from, i).trim()
        if (last !== '') current.push(last)
        elements = current
        current = undefined
      }
      depth--
    } else if (code === 0x2c && depth === 2 && current !== undefined) {
      // A JSON value neither starts nor ends with whitespace, and only JSON's (space, tab, CR, LF) separates tokens, so
      // `trim` removes exactly the whitespace around the element.
      current.push(text.slice(from, i).trim())
      from = i + 1
    }
  }
  return { tooDeep: -1, elements }
}
