import { assertProjectAccess } from '#shared/auth/authenticate'
import { BadRequestError, PayloadTooLargeError } from '#shared/errors/http-error'
import { attributeAt } from '#shared/otel/attribute-tree'
import type { OtelResourceSpans } from '#shared/otel/otlp-model'
import { safeTree } from '#shared/otel/span-dump'
import { type SpanCall, SpanRejectedError, spanToCall } from '#shared/otel/span-to-call'
import type { Principal } from '#shared/schemas/api-key'
import { assertEndFits, assertStartFits, endJson, startJson } from '#shared/tracing/call-build'
import { type IngestItem, ingestCalls } from '#shared/tracing/call-ingest'

/** What an export did not store: the count and a message for OTLP's `partial_success`. */
export type ExportOutcome = { rejected: number; message: string }

// Spans handed to the call ingest at once: bounds the size of its reads and counter updates.
const SPANS_PER_INGEST = 1000
// Rejection reasons quoted in the response; the count covers the rest.
const MAX_REASONS = 5

const PROJECT_RE = /^[^/\s]+\/[^/\s]+$/

/**
 * The project of a resource's spans: its `wandb.entity` and `wandb.project` resource attributes when both are set
 * (they win, as in Weave), else the request's `project_id` header; a 400 when neither names one.
 */
function projectOf(rs: OtelResourceSpans, header: string | undefined): string {
  const tree = safeTree(rs.resource.attributes)
  const entity = attributeAt(tree, 'wandb.entity')
  const project = attributeAt(tree, 'wandb.project')
  const id = typeof entity === 'string' && typeof project === 'string' ? `${entity}/${project}` : header?.trim()
  if (id === undefined || id === '') {
    throw new BadRequestError(
      'Missing project: send the `project_id: <entity>/<project>` header (or the `wandb.entity` and `wandb.project` resource attributes)',
    )
  }
  if (!PROJECT_RE.test(id)) throw new BadRequestError(`Invalid project '${id}': expected <entity>/<project>`)
  return id
}

/** Maps every span to its call, sorting out those that cannot be stored, without writing anything. */
export function planExport(
  principal: Principal,
  resourceSpans: readonly OtelResourceSpans[],
  header: string | undefined,
): { calls: SpanCall[]; reasons: string[] } {
  // The header is checked whether or not a resource uses it (resource attributes win): a request that names a project
  // the caller cannot open is a 403 even with no spans, as every other route checks its project before its body.
  const named = header?.trim()
  if (named !== undefined && named !== '') {
    if (!PROJECT_RE.test(named)) throw new BadRequestError(`Invalid project '${named}': expected <entity>/<project>`)
    assertProjectAccess(principal, named)
  }
  const groups = resourceSpans.map((rs) => ({ rs, project: projectOf(rs, header) }))
  // Every project is checked before any span is mapped: a foreign entity fails the whole request.
  for (const { project } of groups) assertProjectAccess(principal, project)
  const calls: SpanCall[] = []
  const reasons: string[] = []
  for (const { rs, project } of groups) {
    const resourceTree = safeTree(rs.resource.attributes)
    for (const ss of rs.scopeSpans) {
      const origin = { resource: rs.resource, resourceTree, scope: ss.scope, scopeTree: safeTree(ss.scope.attributes) }
      for (const span of ss.spans) {
        try {
          const call = spanToCall(span, project, origin)
          // The same limits `call/upsert_batch` enforces, checked per span so one oversized span fails alone.
          assertStartFits(call.start, startJson(call.start), principal.userId)
          assertEndFits(call.end, endJson(call.end))
          calls.push(call)
        } catch (error) {
          if (error instanceof SpanRejectedError) reasons.push(error.message)
          else if (error instanceof PayloadTooLargeError || error instanceof BadRequestError) {
            reasons.push(`span ${span.spanId}: ${error.message}`)
          } else throw error
        }
      }
    }
  }
  return { calls, reasons }
}

/**
 * Stores the spans of an OTLP export as calls through the call ingest (`call/upsert_batch`'s path: each call counted
 * once, a re-sent span rewrites the same items). Spans that cannot be stored are reported, not written.
 */
export async function exportTraces(
  principal: Principal,
  resourceSpans: readonly OtelResourceSpans[],
  header: string | undefined,
): Promise<ExportOutcome> {
  const { calls, reasons } = planExport(principal, resourceSpans, header)
  for (let i = 0; i < calls.length; i += SPANS_PER_INGEST) {
    const items = calls.slice(i, i + SPANS_PER_INGEST).flatMap((c): IngestItem[] => [
      { mode: 'start', start: c.start },
      { mode: 'end', end: c.end },
    ])
    await ingestCalls(principal, items)
  }
  if (reasons.length === 0) return { rejected: 0, message: '' }
  const shown = reasons.slice(0, MAX_REASONS).join('; ')
  const more = reasons.length > MAX_REASONS ? `; and ${reasons.length - MAX_REASONS} more` : ''
  return { rejected: reasons.length, message: `${reasons.length} spans rejected: ${shown}${more}` }
}
