import { describe, expect, it } from 'vitest'
import { app as createApp } from '#functions/tracing/create-table/handler'
import { app as queryApp } from '#functions/tracing/query-table/handler'
import { newProjectCaller, type ProjectCaller, send } from '../../support/tracing.js'

const TABLE = 'ed8bd1f8cb829eeb6b3fef95a7cd8401f7e5af825c4c9aa144a1ceb9f32c3654'
const ROWS = ['YTYlqmU0Pbsbmr5qusZ3P1yRvWDT8vX34urmnh24sic', 'JPVyYA4VDTIwE4OFqgAGyhuZO0a7Qn90bMaQyY2TJBM']

const create = (c: ProjectCaller, rows: unknown[], extra: Record<string, unknown> = {}) =>
  send(createApp, '/table/create', { table: { project_id: c.project, rows, ...extra } }, c)
const query = (c: ProjectCaller, body: Record<string, unknown>) =>
  send(queryApp, '/table/query', { project_id: c.project, ...body }, c)

describe('POST /table/create', () => {
  it('returns the contract table and row digests, the same on a repeat', async () => {
    const caller = await newProjectCaller()
    const first = await create(caller, [{ x: 1 }, { x: 2 }])
    const again = await create(caller, [{ x: 1 }, { x: 2 }], { expected_digest: TABLE })
    expect(first).toEqual({ status: 200, body: { digest: TABLE, row_digests: ROWS } })
    expect(again.body).toEqual(first.body)
  })

  it('hashes rows with numbers as sent', async () => {
    const caller = await newProjectCaller()
    const body = `{"table": {"project_id": "${caller.project}", "rows": [{"score": 1.0}, {"score": 1}]}}`
    const res = await createApp.request('/table/create', {
      method: 'POST',
      headers: { ...caller.basic, 'content-type': 'application/json' },
      body,
    })
    expect(await res.json()).toEqual({
      digest: '096721357e5db327950368496b49a817a56e14dd3ce8aeb955ea371415b612e2',
      row_digests: ['hP3Esmm4d5Fvmxz1wMYKUERpFzuFGtxn6UgxYByWHU4', 'yEkTEexSrpVgtm59w9ZbzJ4bBP89kNflv8Q3193JUs0'],
    })
  })

  it('answers 400 for a non-object row and 409 for a wrong expected digest', async () => {
    const caller = await newProjectCaller()
    const bad = await create(caller, [{ x: 1 }, 5])
    const mismatch = await create(caller, [{ x: 1 }], { expected_digest: 'nope' })
    expect(bad).toEqual({ status: 400, body: { reason: 'All rows must be dictionaries' } })
    expect(mismatch.status).toBe(409)
  })

  it('answers 422 without rows and 403 for a foreign project', async () => {
    const a = await newProjectCaller()
    const b = await newProjectCaller()
    const noRows = await send(createApp, '/table/create', { table: { project_id: a.project } }, a)
    const foreign = await create({ ...a, project: b.project }, [{ x: 1 }])
    expect(noRows.status).toBe(422)
    expect(foreign.status).toBe(403)
  })

  it('stores rows larger than the DynamoDB item limit whole', async () => {
    const caller = await newProjectCaller()
    const big = { text: '😀x'.repeat(150_000), n: 1 }
    const created = await create(caller, [{ small: true }, big])
    const res = await query(caller, { digest: created.body.digest })
    expect(res.body.rows[1].val).toEqual(big)
    expect(res.body.rows.map((r: { digest: string }) => r.digest)).toEqual(created.body.row_digests)
  })
})

describe('POST /table/query', () => {
  it('returns rows in insertion order with digests and indexes, paged', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const { body } = await create(caller, [{ x: 1 }, { x: 2 }, { x: 3 }])

    // Act
    const all = await query(caller, { digest: body.digest })
    const page = await query(caller, { digest: body.digest, limit: 1, offset: 1 })

    // Assess
    expect(all.body.rows).toEqual([
      { digest: ROWS[0], val: { x: 1 }, original_index: 0 },
      { digest: ROWS[1], val: { x: 2 }, original_index: 1 },
      { digest: body.row_digests[2], val: { x: 3 }, original_index: 2 },
    ])
    expect(page.body.rows).toEqual([{ digest: ROWS[1], val: { x: 2 }, original_index: 1 }])
  })

  it('filters by row digests and sorts by dot paths', async () => {
    const caller = await newProjectCaller()
    const { body } = await create(caller, [{ a: { b: 2 } }, { a: { b: 10 } }, { a: { b: 1 } }])
    const sorted = await query(caller, { digest: body.digest, sort_by: [{ field: 'a.b', direction: 'desc' }] })
    const filtered = await query(caller, { digest: body.digest, filter: { row_digests: [body.row_digests[2]] } })
    expect(sorted.body.rows.map((r: { original_index: number }) => r.original_index)).toEqual([1, 0, 2])
    expect(filtered.body.rows.map((r: { original_index: number }) => r.original_index)).toEqual([2])
  })

  it('returns no rows for an unknown table and 403 for a foreign project', async () => {
    const a = await newProjectCaller()
    const b = await newProjectCaller()
    const unknown = await query(a, { digest: TABLE })
    const foreign = await query({ ...a, project: b.project }, { digest: TABLE })
    expect(unknown).toEqual({ status: 200, body: { rows: [] } })
    expect(foreign.status).toBe(403)
  })
})
