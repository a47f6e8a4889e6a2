import { readFeedbackWindow } from '#shared/db/feedback-reads'
import type { FeedbackPayloadSchemaReq } from '#shared/schemas/feedback-stats'
import { isSafeJsonPath } from '#shared/tracing/feedback-json-path'
import { resolveWindow } from '#shared/tracing/feedback-window'

type Seen = Set<'number' | 'boolean' | 'string' | 'null'>

function note(types: Map<string, Seen>, path: string, v: unknown): void {
  const kind =
    v === null
      ? 'null'
      : typeof v === 'number'
        ? 'number'
        : typeof v === 'boolean'
          ? 'boolean'
          : typeof v === 'string'
            ? 'string'
            : undefined
  if (kind === undefined) return
  const seen = types.get(path) ?? new Set()
  seen.add(kind)
  types.set(path, seen)
}

function walk(types: Map<string, Seen>, value: Record<string, unknown>, prefix: string): void {
  for (const [key, v] of Object.entries(value)) {
    // Keys that cannot be addressed by a dot path are skipped.
    if (key === '' || key.includes('.')) continue
    const path = prefix === '' ? key : `${prefix}.${key}`
    if (Array.isArray(v)) for (const item of v) note(types, path, item)
    else if (typeof v === 'object' && v !== null) walk(types, v as Record<string, unknown>, path)
    else note(types, path, v)
  }
}

function typeOf(seen: Seen): 'numeric' | 'boolean' | 'categorical' {
  if (seen.has('string') || (seen.has('boolean') && seen.has('number'))) return 'categorical'
  if (seen.has('boolean')) return 'boolean'
  return 'numeric'
}

/**
 * `feedback/payload_schema` (docs/tracing.md §12.7): leaf paths and value types of the newest payloads in the window.
 */
export async function feedbackPayloadSchema(req: FeedbackPayloadSchemaReq) {
  const { startMs, endMs } = resolveWindow(req)
  const types = new Map<string, Seen>()
  let sampled = 0
  const pages = readFeedbackWindow({
    project: req.project_id,
    startIso: new Date(startMs).toISOString(),
    endIso: new Date(endMs).toISOString(),
    feedbackType: req.feedback_type,
    triggerRef: req.trigger_ref,
    newestFirst: true,
    limit: req.sample_limit,
  })
  for await (const page of pages) {
    for (const row of page) {
      if (sampled >= req.sample_limit) break
      sampled++
      let payload: unknown
      try {
        payload = JSON.parse(row.payload)
      } catch {
        continue
      }
      if (typeof payload === 'object' && payload !== null && !Array.isArray(payload))
        walk(types, payload as Record<string, unknown>, '')
    }
    if (sampled >= req.sample_limit) break
  }
  const paths = [...types.entries()]
    .filter(([path]) => isSafeJsonPath(path))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([json_path, seen]) => ({ json_path, value_type: typeOf(seen) }))
  return { paths }
}
