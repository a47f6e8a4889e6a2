import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { app as createObjApp } from '#functions/tracing/create-obj/handler'
import { app as statsApp } from '#functions/tracing/get-feedback-stats/handler'
import { app as callStatsApp } from '#functions/tracing/query-call-stats/handler'
import { app as queryObjsApp } from '#functions/tracing/query-objs/handler'
import { app as readCallApp } from '#functions/tracing/read-call/handler'
import { app as readObjApp } from '#functions/tracing/read-obj/handler'
import { app as batchApp } from '#functions/tracing/upsert-call-batch/handler'
import { newProjectCaller, send } from '../../support/tracing.js'

const start = (project: string, id: string) => ({
  project_id: project,
  id,
  trace_id: randomUUID(),
  op_name: 'op',
  started_at: '2025-01-01T00:00:00Z',
  attributes: {},
  inputs: {},
})

describe('tracing requests parse like pydantic in lax mode', () => {
  it('takes 1, "true" and "yes" for booleans and "5" or 5.0 for integers', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const p = caller.project
    await send(createObjApp, '/obj/create', { obj: { project_id: p, object_id: 'o', val: { a: 1 } } }, caller)
    await send(createObjApp, '/obj/create', { obj: { project_id: p, object_id: 'o', val: { a: 2 } } }, caller)

    // Act
    const read = await send(
      readObjApp,
      '/obj/read',
      { project_id: p, object_id: 'o', digest: 'v0', metadata_only: 1 },
      caller,
    )
    const tagged = await send(
      readObjApp,
      '/obj/read',
      { project_id: p, object_id: 'o', digest: 'latest', include_tags_and_aliases: 'true' },
      caller,
    )
    const limited = await send(queryObjsApp, '/objs/query', { project_id: p, limit: '1', offset: 1.0 }, caller)
    const latest = await send(queryObjsApp, '/objs/query', { project_id: p, filter: { latest_only: 'yes' } }, caller)
    const stats = await send(callStatsApp, '/calls/query_stats', { project_id: p, limit: ' 1_0 ' }, caller)

    // Assess
    expect(read.status).toBe(200)
    expect(read.body.obj.val).toEqual({})
    expect(tagged.body.obj.aliases).toEqual(['latest'])
    expect(limited.body.objs.map((o: { version_index: number }) => o.version_index)).toEqual([1])
    expect(latest.body.objs).toHaveLength(1)
    expect(stats.body).toEqual({ count: 0, has_more: false, total_storage_size_bytes: null })
  })

  it('takes numeric strings for floats and ints of feedback/stats', async () => {
    // Prepare
    const caller = await newProjectCaller()

    // Act
    const res = await send(
      statsApp,
      '/feedback/stats',
      {
        project_id: caller.project,
        start: '2024-01-01T00:00:00Z',
        end: '2024-01-01T02:00:00Z',
        granularity: '3600',
        metrics: [{ json_path: 's', aggregations: ['max'], percentiles: ['50', true] }],
      },
      caller,
    )

    // Assess
    expect(res.status).toBe(200)
    expect(res.body.granularity).toBe(3600)
    expect(Object.keys(res.body.buckets[0])).toEqual(['timestamp', 'max_s', 'p50_s', 'p1_s', 'count'])
  })

  it("answers 422 {detail} with pydantic's type, msg and loc for values lax mode refuses", async () => {
    // Prepare
    const caller = await newProjectCaller()
    const p = caller.project

    // Act
    const word = await send(callStatsApp, '/calls/query_stats', { project_id: p, limit: 'five' }, caller)
    const fraction = await send(callStatsApp, '/calls/query_stats', { project_id: p, limit: 1.5 }, caller)
    const maybe = await send(readCallApp, '/call/read', { project_id: p, id: 'x', include_costs: 'maybe' }, caller)
    const two = await send(readCallApp, '/call/read', { project_id: p, id: 'x', include_costs: 2 }, caller)
    const list = await send(readCallApp, '/call/read', { project_id: p, id: 'x', include_costs: [] }, caller)

    // Assess
    expect(word).toEqual({
      status: 422,
      body: {
        detail: [
          {
            type: 'int_parsing',
            loc: ['body', 'limit'],
            msg: 'Input should be a valid integer, unable to parse string as an integer',
            input: 'five',
          },
        ],
      },
    })
    expect(fraction.body.detail[0]).toMatchObject({
      type: 'int_from_float',
      msg: 'Input should be a valid integer, got a number with a fractional part',
    })
    expect(maybe.body.detail[0]).toMatchObject({
      type: 'bool_parsing',
      loc: ['body', 'include_costs'],
      msg: 'Input should be a valid boolean, unable to interpret input',
    })
    expect(two.body.detail[0]).toMatchObject({ type: 'bool_parsing' })
    expect(list.body.detail[0]).toMatchObject({ type: 'bool_type', msg: 'Input should be a valid boolean' })
  })

  it('reads an upsert_batch item by the shape of req, whatever its mode string (the reference union)', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const p = caller.project
    const id = randomUUID()
    const end = { project_id: p, id, ended_at: '2025-01-01T00:00:01Z', summary: {} }

    // Act
    const ok = await send(
      batchApp,
      '/call/upsert_batch',
      { batch: [{ mode: 'bogus', req: { start: start(p, id) } }, { req: { end } }] },
      caller,
    )
    const call = await send(readCallApp, '/call/read', { project_id: p, id }, caller)
    const numeric = await send(
      batchApp,
      '/call/upsert_batch',
      { batch: [{ mode: 5, req: { start: start(p, randomUUID()) } }] },
      caller,
    )

    // Assess
    expect(ok.status).toBe(200)
    expect(ok.body.res).toHaveLength(2)
    expect(call.body.call).toMatchObject({ id, ended_at: '2025-01-01T00:00:01Z' })
    expect(numeric.status).toBe(422)
    expect(numeric.body.detail[0]).toMatchObject({ type: 'string_type', msg: 'Input should be a valid string' })
  })

  it('answers 422 literal_error for an enum miss', async () => {
    // Prepare
    const caller = await newProjectCaller()

    // Act
    const direction = await send(
      queryObjsApp,
      '/objs/query',
      { project_id: caller.project, sort_by: [{ field: 'created_at', direction: 'up' }] },
      caller,
    )
    const valueType = await send(
      statsApp,
      '/feedback/stats',
      { project_id: caller.project, start: '2024-01-01T00:00:00Z', metrics: [{ json_path: 's', value_type: 'text' }] },
      caller,
    )

    // Assess
    expect(direction.status).toBe(422)
    expect(direction.body.detail[0]).toMatchObject({
      type: 'literal_error',
      loc: ['body', 'sort_by', 0, 'direction'],
      msg: "Input should be 'asc' or 'desc'",
    })
    expect(valueType.status).toBe(422)
    expect(valueType.body.detail[0]).toMatchObject({
      type: 'literal_error',
      msg: "Input should be 'numeric', 'boolean' or 'categorical'",
    })
  })
})
