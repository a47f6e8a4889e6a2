/**
 * ClickHouse's text for a JSON value, as the reference reads a payload path into a result column:
 * `toString(JSON_VALUE(payload_dump, path))` (orm.py `_transform_external_field_to_internal_field`), run with
 * `function_json_value_return_type_allow_complex = 1` (clickhouse_trace_server_settings.py). ClickHouse formats what
 * it finds with its simdjson element formatter (src/Common/JSONParsers/SimdJSONParser.h).
 */

// std::to_chars(double) with no format: the shortest round-trip digits written as %f or %e, whichever is shorter
// (%f on a tie), so 1.5 → "1.5", 0.0001 → "1e-04", 1e20 → "1e+20".
function toCharsDouble(value: number): string {
  if (!Number.isFinite(value)) return String(value)
  const sign = value < 0 ? '-' : ''
  const [mantissa = '0', exp = '0'] = Math.abs(value).toExponential().split('e')
  const digits = mantissa.replace('.', '')
  const e = Number(exp)
  const scientific = `${mantissa}e${e < 0 ? '-' : '+'}${String(Math.abs(e)).padStart(2, '0')}`
  let fixed: string
  if (e < 0) fixed = `0.${'0'.repeat(-e - 1)}${digits}`
  else if (digits.length <= e + 1) fixed = digits + '0'.repeat(e + 1 - digits.length)
  else fixed = `${digits.slice(0, e + 1)}.${digits.slice(e + 1)}`
  return sign + (scientific.length < fixed.length ? scientific : fixed)
}

// simdjson reads an integer literal as Int64 and prints its digits; JSON cannot tell 1.0 from 1, so a safe integer is
// taken to be one (a Python float 1.0 prints as "1" all the same).
const chNumber = (value: number) => (Number.isSafeInteger(value) ? String(value) : toCharsDouble(value))

// The formatter's minified JSON: no spaces, strings escaped as JSON.stringify escapes them (`"`, `\` and controls).
function chJson(value: unknown): string {
  if (value === null || value === undefined) return 'null'
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (typeof value === 'number') return chNumber(value)
  if (typeof value === 'string') return JSON.stringify(value)
  if (Array.isArray(value)) return `[${value.map(chJson).join(',')}]`
  const entries = Object.entries(value as Record<string, unknown>)
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${chJson(v)}`).join(',')}}`
}

/**
 * The reference's text for a JSON path: '' when the path is missing, a string unquoted, anything else (numbers,
 * booleans, `null`, objects and arrays) as ClickHouse prints it.
 * @example jsonValueText(10, true) // '10'
 */
export function jsonValueText(raw: unknown, present: boolean): string {
  if (!present) return ''
  return typeof raw === 'string' ? raw : chJson(raw)
}
