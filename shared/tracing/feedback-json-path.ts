import { BadRequestError } from '#shared/errors/http-error'
import { pyRepr } from '#shared/tracing/digest'

// The newest reference builder allows spaces (classifier monitors key payloads by names such as "Low quality").
// Python's `re.match` with `$` also matches just before a final newline, so "score\n" passes there too.
const JSON_PATH_PATTERN = /^[a-zA-Z0-9_. ]+\n?$/

/** Whether a feedback `json_path` uses only the characters the reference's stats builder accepts. */
export function isSafeJsonPath(path: string): boolean {
  return JSON_PATH_PATTERN.test(path)
}

// The characters Python's `str.strip()` removes (`str.isspace`), which differ from JavaScript's `\s`.
const PY_SPACE = new Set([
  ...'\t\n\v\f\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000',
  ...Array.from({ length: 11 }, (_, i) => String.fromCharCode(0x2000 + i)),
])

const isBlank = (text: string) => [...text].every((ch) => PY_SPACE.has(ch))

/** Checks a metric's `json_path` as the reference builder does (400 for an empty or unsafe path). */
export function assertJsonPath(path: string): void {
  if (isBlank(path)) throw new BadRequestError('json_path cannot be empty')
  if (!isSafeJsonPath(path)) {
    throw new BadRequestError(`json_path may only contain [a-zA-Z0-9_. ], got: ${pyRepr(path)}`)
  }
}

/** The column slug of a `json_path`: dots and spaces become underscores (`output.score` → `output_score`). */
export function metricSlug(path: string): string {
  return path.replace(/[. ]/g, '_')
}
