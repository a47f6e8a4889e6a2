/**
 * Weave's `shorten_name` (`weave/trace_server/opentelemetry/helpers.py`), written again from its semantics: a name
 * longer than `maxLength` characters (Unicode code points, as Python counts) is cut at a delimiter where it can be,
 * and `abbreviation` appended; names up to `maxLength` are kept as they are.
 */

// Weave's delimiter list, in its order (a run of them counts as one delimiter).
const DELIMITERS = new Set([',', ';', '|', ' ', '/', '?', '.'])

type Part = { text: string; length: number; delimiter: boolean }

// The name split into runs of other characters and single delimiters (Weave's `capture_parts`).
function partsOf(chars: string[]): Part[] {
  const parts: Part[] = []
  for (const c of chars) {
    const delimiter = DELIMITERS.has(c)
    const last = parts[parts.length - 1]
    if (!delimiter && last !== undefined && !last.delimiter) {
      last.text += c
      last.length++
    } else parts.push({ text: c, length: 1, delimiter })
  }
  return parts
}

/**
 * Shortens `name` to at most `maxLength` characters, Weave's way.
 * @example shortenName('hello/world.txt', 10) // 'hello/...'
 * @example shortenName('hello/world.txt', 10, ':1234', false) // 'hello:1234'
 */
export function shortenName(name: string, maxLength: number, abbreviation = '...', delimiterInAbbreviation = true) {
  const chars = Array.from(name)
  if (chars.length <= maxLength) return name
  const abbreviationLength = Array.from(abbreviation).length
  const truncated = () => chars.slice(0, maxLength - abbreviationLength).join('') + abbreviation
  const parts = partsOf(chars)
  const first = parts[0] as Part
  if (parts.length <= 1 || first.length > maxLength - abbreviationLength) return truncated()
  let shortened = first.text
  let length = first.length
  let i = 1
  while (i < parts.length) {
    let delimiter = ''
    for (; parts[i]?.delimiter === true; i++) delimiter += parts[i]?.text
    // Weave reads past the end (an IndexError) for a name ending in delimiters; here they are the last part.
    const next = parts[i]
    const nextLength = delimiter.length + (next?.length ?? 0)
    // With no abbreviation, no trailing delimiter either.
    const tail =
      abbreviationLength === 0
        ? ''
        : abbreviation.startsWith(delimiter) || !delimiterInAbbreviation
          ? abbreviation
          : delimiter + abbreviation
    if (length + nextLength >= maxLength - Array.from(tail).length) return shortened + tail
    shortened += delimiter + (next?.text ?? '')
    length += nextLength
    i++
  }
  return shortened
}
