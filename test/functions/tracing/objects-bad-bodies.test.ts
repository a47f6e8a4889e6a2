import fc from 'fast-check'
import type { Hono } from 'hono'
import { beforeAll, describe, expect, it } from 'vitest'
import { app as addItems } from '#functions/tracing/add-annotation-queue-items/handler'
import { app as createQueue } from '#functions/tracing/create-annotation-queue/handler'
import { app as createFeedback } from '#functions/tracing/create-feedback/handler'
import { app as createObj } from '#functions/tracing/create-obj/handler'
import { app as createTable } from '#functions/tracing/create-table/handler'
import { app as deleteObj } from '#functions/tracing/delete-obj/handler'
import { app as stats } from '#functions/tracing/get-feedback-stats/handler'
import { app as purgeFeedback } from '#functions/tracing/purge-feedback/handler'
import { app as queryFeedback } from '#functions/tracing/query-feedback/handler'
import { app as queryObjs } from '#functions/tracing/query-objs/handler'
import { app as queryTable } from '#functions/tracing/query-table/handler'
import { app as readObj } from '#functions/tracing/read-obj/handler'
import { app as progress } from '#functions/tracing/update-annotation-queue-item-progress/handler'
import type { AppEnv } from '#shared/http/app-env'
import { newProjectCaller, type ProjectCaller } from '../../support/tracing.js'

let caller: ProjectCaller
beforeAll(async () => {
  caller = await newProjectCaller()
})

const ENDPOINTS: [string, Hono<AppEnv>, string[]][] = [
  ['/obj/create', createObj, ['obj']],
  ['/obj/read', readObj, ['object_id', 'digest', 'metadata_only', 'include_tags_and_aliases']],
  ['/objs/query', queryObjs, ['filter', 'limit', 'offset', 'sort_by', 'metadata_only']],
  ['/obj/delete', deleteObj, ['object_id', 'digests']],
  ['/table/create', createTable, ['table']],
  ['/table/query', queryTable, ['digest', 'filter', 'limit', 'offset', 'sort_by']],
  ['/feedback/create', createFeedback, ['weave_ref', 'feedback_type', 'payload', 'id', 'runnable_ref', 'queue_id']],
  ['/feedback/query', queryFeedback, ['query', 'fields', 'sort_by', 'limit', 'offset']],
  ['/feedback/purge', purgeFeedback, ['query']],
  ['/feedback/stats', stats, ['start', 'end', 'granularity', 'timezone', 'metrics', 'feedback_type', 'trigger_ref']],
  ['/annotation_queues', createQueue, ['name', 'description', 'scorer_refs']],
  ['/annotation_queues/q1/items', addItems, ['call_ids', 'display_fields']],
  ['/annotation_queues/q1/items/i1/progress', progress, ['annotation_state']],
]

// Values of every JSON shape, a few the endpoints give meaning to, and nested bodies (`obj`, `table`, metrics).
function values(project: string) {
  return fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.constantFrom('latest', 'v0', 'completed', '2024-01-01T00:00:00Z', {
      $expr: { $eq: [{ $getField: 'id' }, { $literal: 'x' }] },
    }),
    fc.record(
      {
        project_id: fc.oneof(fc.constant(project), fc.jsonValue()),
        object_id: fc.oneof(fc.string(), fc.jsonValue()),
        val: fc.jsonValue({ maxDepth: 3 }),
        rows: fc.oneof(fc.array(fc.jsonValue({ maxDepth: 2 })), fc.jsonValue()),
        builtin_object_class: fc.oneof(fc.constantFrom('Leaderboard', 'AnnotationSpec', 'Nope'), fc.jsonValue()),
        expected_digest: fc.jsonValue(),
      },
      { requiredKeys: [] },
    ),
    fc.array(
      fc.record(
        {
          json_path: fc.oneof(fc.constantFrom('a', 'a.b', '', 'a-b'), fc.jsonValue()),
          value_type: fc.oneof(fc.constantFrom('numeric', 'boolean', 'categorical'), fc.jsonValue()),
          aggregations: fc.oneof(
            fc.array(fc.constantFrom('sum', 'avg', 'min', 'max', 'count', 'count_true')),
            fc.jsonValue(),
          ),
          percentiles: fc.oneof(fc.array(fc.double({ noNaN: true })), fc.jsonValue()),
        },
        { requiredKeys: [] },
      ),
      { maxLength: 3 },
    ),
  )
}

describe('tracing object, feedback and queue endpoints under arbitrary bodies', () => {
  it.each(ENDPOINTS)('%s answers 2xx or 4xx, never 5xx', async (path, app, keys) => {
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(fc.constantFrom(...keys), values(caller.project), { maxKeys: keys.length }),
        fc.boolean(),
        async (fields, withProject) => {
          const body = withProject ? { project_id: caller.project, ...fields } : fields
          const res = await app.request(path, {
            method: 'POST',
            headers: { ...caller.basic, 'content-type': 'application/json' },
            body: JSON.stringify(body),
          })
          expect(res.status, `${path} ${JSON.stringify(body)}: ${await res.text()}`).toBeLessThan(500)
        },
      ),
      { numRuns: 40 },
    )
  })
})
