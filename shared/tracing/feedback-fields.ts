import type { FeedbackRow } from '#shared/schemas/feedback'
import { type Val, walkJson } from '#shared/tracing/query-eval'
import { parseDatetimeMicros } from '#shared/tracing/time'

// Feedback's JSON columns: `payload` is a JSON dump in the reference; the scorer maps are read by key.
const JSON_COLUMNS = new Set([
  'payload',
  'scorer_tag_confidences',
  'scorer_ratings',
  'scorer_rating_reasons',
  'scorer_rating_confidences',
])

/**
 * Resolves a query path on a feedback row for the shared query evaluator: `created_at` as a datetime, `payload.*` and
 * the scorer maps as JSON paths, every other column (arrays such as `scorer_tags` included) as a plain value.
 */
export function feedbackField(row: FeedbackRow, path: string): Val {
  if (path === 'created_at') return { t: 'date', v: parseDatetimeMicros(row.created_at) ?? null }
  const [head = '', ...rest] = path.split('.')
  const columns = row as Record<string, unknown>
  if (JSON_COLUMNS.has(head)) return { t: 'json', ...walkJson(columns[head], rest) }
  if (rest.length === 0 && Object.hasOwn(columns, head)) return { t: 'plain', v: columns[head] ?? null }
  // Unknown columns read as a missing JSON value ('' in comparisons), as the feedback query always did.
  return { t: 'json', ...walkJson(columns, path.split('.')) }
}
