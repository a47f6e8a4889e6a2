// SQL's `ILIKE '%<pattern>%'`, as Weave filters annotation queues by name: a case-insensitive substring match in which
// `%` stands for any run of characters and `_` for one. One regular expression with a `.*` per `%` backtracks
// exponentially on a pattern such as `%a%a%a%a%b` against a long run of `a` (seconds at 12 characters, hours at 14,
// the whole server blocked meanwhile). The pattern is cut at its `%`s instead, and each piece, of fixed length, is
// found leftmost after the previous one: for pieces separated by `%`, the leftmost placement of each is a match
// whenever any placement is, so the search never goes back, and its cost is at most the name's length times the
// pattern's.

const ESCAPE = /[.*+?^${}()|[\]\\]/g

// One `%`-free piece: literal characters, `_` as any one (a UTF-16 unit, as the single expression read it).
function piece(text: string): RegExp {
  const body = [...text].map((ch) => (ch === '_' ? '.' : ch.replace(ESCAPE, '\\$&'))).join('')
  return new RegExp(body, 'gis')
}

/** Whether `text` matches SQL's `ILIKE '%<pattern>%'`. */
export function ilikeMatcher(pattern: string): (text: string) => boolean {
  const pieces = pattern
    .split('%')
    .filter((p) => p !== '')
    .map(piece)
  return (text) => {
    let from = 0
    for (const re of pieces) {
      re.lastIndex = from
      const found = re.exec(text)
      if (found === null) return false
      from = found.index + found[0].length
    }
    return true
  }
}
