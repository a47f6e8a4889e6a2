// Rows of JSON values shown as a table (a Dataset's rows on Objects, feedback payloads on Feedback): the columns are
// the union of the rows' keys, each cell a one-line preview; the full value goes to the JSON viewer.

/** The rows of a table the Objects page reads at once (`table/query` `limit`). */
export const TABLE_PAGE_SIZE = 50

/** The most columns a table of rows shows; a row's other keys are in its JSON view. */
export const MAX_COLUMNS = 30

/** The longest preview a cell shows before it is cut with "…" (the JSON viewer shows the rest). */
export const PREVIEW_CHARS = 120

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * The union of the rows' keys in the order first seen (a row that is not an object adds none), at most `max`.
 * @example columnsOf([{ a: 1 }, { b: 2, a: 3 }]) // ['a', 'b']
 */
export function columnsOf(rows: readonly unknown[], max = MAX_COLUMNS): string[] {
  const seen = new Set<string>()
  for (const row of rows) {
    if (!isRecord(row)) continue
    for (const key of Object.keys(row)) {
      if (seen.size >= max) return [...seen]
      seen.add(key)
    }
  }
  return [...seen]
}

/**
 * A value on one line: a string as is, a number or boolean as text, `null`, an object or list as compact JSON; cut
 * to `max` characters with "…". `undefined` (a key the row lacks) is `''`.
 * @example compactValue({ a: [1, 2] }) // '{"a":[1,2]}'
 */
export function compactValue(value: unknown, max = PREVIEW_CHARS): string {
  if (value === undefined) return ''
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value))
  const line = text.replace(/\s+/g, ' ')
  return line.length > max ? `${line.slice(0, max)}…` : line
}

/** The body of `table/query` for one page of a table's rows, in the table's order. */
export function tableRowsRequest(
  project: string,
  digest: string,
  page: { offset: number; limit: number },
): Record<string, unknown> {
  return { project_id: project, digest, offset: page.offset, limit: page.limit }
}
