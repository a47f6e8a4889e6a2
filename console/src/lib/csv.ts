/** One CSV field (RFC 4180): quoted when it holds a comma, quote, CR or LF, quotes doubled; null and undefined empty. */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return ''
  const text = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value)
  // A leading =, +, - or @ makes spreadsheets evaluate the cell; a leading quote mark keeps it text (OWASP CSV
  // injection), except for plain numbers such as -1.5.
  const safe = /^[=+\-@\t\r]/.test(text) && !/^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(text) ? `'${text}` : text
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe
}

/** A CSV document: a header row, then one row per record, CRLF line ends. */
export function toCsv(columns: readonly string[], rows: readonly (readonly unknown[])[]): string {
  return `${[columns, ...rows].map((row) => row.map(csvField).join(',')).join('\r\n')}\r\n`
}
