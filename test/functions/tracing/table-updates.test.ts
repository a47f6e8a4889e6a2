import { describe, expect, it } from 'vitest'
import { app as createApp } from '#functions/tracing/create-table/handler'
import { app as fromDigestsApp } from '#functions/tracing/create-table-from-digests/handler'
import { app as queryApp } from '#functions/tracing/query-table/handler'
import { app as statsApp } from '#functions/tracing/query-table-stats/handler'
import { app as statsBatchApp } from '#functions/tracing/query-table-stats-batch/handler'
import { app as updateApp } from '#functions/tracing/update-table/handler'
import { TableQueryStatsBatchResSchema, TableUpdateResSchema } from '#shared/schemas/table-response'
import { tableDigest, valDigest } from '#shared/tracing/digest'
import { sendText } from '../../support/objects.js'
import { newProjectCaller, type ProjectCaller, send } from '../../support/tracing.js'

const EMPTY = tableDigest([])

const create = async (c: ProjectCaller, rows: unknown[]) => {
  const res = await send(createApp, '/table/create', { table: { project_id: c.project, rows } }, c)
  expect(res.status).toBe(200)
  return res.body as { digest: string; row_digests: string[] }
}
const update = (c: ProjectCaller, base_digest: string, updates: unknown[]) =>
  send(updateApp, '/table/update', { project_id: c.project, base_digest, updates }, c)
const fromDigests = (c: ProjectCaller, row_digests: string[], extra: Record<string, unknown> = {}) =>
  send(fromDigestsApp, '/table/create_from_digests', { project_id: c.project, row_digests, ...extra }, c)
const values = async (c: ProjectCaller, digest: string) => {
  const res = await send(queryApp, '/table/query', { project_id: c.project, digest }, c)
  return res.body.rows.map((r: { val: unknown }) => r.val)
}

describe('POST /table/update', () => {
  it('applies appends, pops and inserts in order into a new table and names each row touched', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const base = await create(caller, [{ x: 1 }, { x: 2 }])
    const [d1, d2] = base.row_digests as [string, string]
    const d3 = valDigest({ x: 3 })
    const d4 = valDigest({ x: 4 })

    // Act
    const res = await update(caller, base.digest, [
      { append: { row: { x: 3 } } },
      { pop: { index: 0 } },
      { insert: { index: 1, row: { x: 4 } } },
    ])

    // Assess
    expect(res).toEqual({
      status: 200,
      body: { digest: tableDigest([d2, d4, d3]), updated_row_digests: [d3, d1, d4] },
    })
    expect(TableUpdateResSchema.parse(res.body)).toEqual(res.body)
    expect(await values(caller, res.body.digest)).toEqual([{ x: 2 }, { x: 4 }, { x: 3 }])
    expect(await values(caller, base.digest)).toEqual([{ x: 1 }, { x: 2 }])
  })

  it('answers a retry with the same table, stored once', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const base = await create(caller, [{ x: 1 }])
    const updates = [{ append: { row: { x: 2 } } }]

    // Act
    const first = await update(caller, base.digest, updates)
    const again = await update(caller, base.digest, updates)

    // Assess
    expect(again).toEqual(first)
    expect(await values(caller, first.body.digest)).toEqual([{ x: 1 }, { x: 2 }])
  })

  it('hashes appended rows with numbers as sent', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const base = await create(caller, [])
    const body = `{"project_id": "${caller.project}", "base_digest": "${base.digest}", "updates": [{"append": {"row": {"score": 1.0}}}]}`

    // Act
    const res = await updateApp.request('/table/update', {
      method: 'POST',
      headers: { ...caller.basic, 'content-type': 'application/json' },
      body,
    })

    // Assess: the digest of {"score": 1.0}, not of {"score": 1}
    expect(((await res.json()) as { updated_row_digests: string[] }).updated_row_digests).toEqual([
      'hP3Esmm4d5Fvmxz1wMYKUERpFzuFGtxn6UgxYByWHU4',
    ])
  })

  it('answers 404 for an unknown base table', async () => {
    const caller = await newProjectCaller()
    const res = await update(caller, EMPTY, [{ append: { row: { x: 1 } } }])
    expect(res).toEqual({ status: 404, body: { reason: `Table ${caller.project}:${EMPTY} not found` } })
  })

  it.each([
    ['a pop at the length', [{ pop: { index: 3 } }]],
    ['a negative pop', [{ pop: { index: -1 } }]],
    ['an insert past the length', [{ insert: { index: 4, row: { x: 9 } } }]],
    ['a negative insert', [{ insert: { index: -1, row: { x: 9 } } }]],
    ['a pop past the rows left by an earlier pop', [{ pop: { index: 0 } }, { pop: { index: 2 } }]],
  ])('answers 400 Index out of range for %s, storing nothing', async (_, updates) => {
    // Prepare: the append first makes three rows
    const caller = await newProjectCaller()
    const base = await create(caller, [{ x: 1 }, { x: 2 }])

    // Act
    const res = await update(caller, base.digest, [{ append: { row: { x: 3 } } }, ...updates])
    const appended = await send(
      statsApp,
      '/table/query_stats',
      { project_id: caller.project, digest: tableDigest([...base.row_digests, valDigest({ x: 3 })]) },
      caller,
    )

    // Assess
    expect(res).toEqual({ status: 400, body: { reason: 'Index out of range' } })
    expect(appended.status).toBe(404)
  })

  it.each([
    ['a row that is not an object', [{ append: { row: [1] } }]],
    ['an unknown operation', [{ replace: { index: 0, row: {} } }]],
    ['an insert without a row', [{ insert: { index: 0 } }]],
  ])('answers 422 for %s', async (_, updates) => {
    const caller = await newProjectCaller()
    const base = await create(caller, [{ x: 1 }])
    const res = await update(caller, base.digest, updates)
    expect(res.status).toBe(422)
  })
})

describe('POST /table/create_from_digests', () => {
  it('builds a table from rows stored in the project, in the order and with the repeats given', async () => {
    // Prepare: rows of two tables, one larger than a DynamoDB item
    const caller = await newProjectCaller()
    const big = { text: 'é'.repeat(200_000) }
    const one = await create(caller, [{ a: 1 }, big])
    const two = await create(caller, [{ b: 2 }])
    const [a, bigDigest] = one.row_digests as [string, string]
    const b = two.row_digests[0] as string
    const digests = [b, a, bigDigest, b]

    // Act
    const res = await fromDigests(caller, digests, { expected_digest: tableDigest(digests) })
    const again = await fromDigests(caller, digests)

    // Assess
    expect(res).toEqual({ status: 200, body: { digest: tableDigest(digests) } })
    expect(again).toEqual(res)
    expect(await values(caller, res.body.digest)).toEqual([{ b: 2 }, { a: 1 }, big, { b: 2 }])
  })

  it('finds rows written by table/update', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const base = await create(caller, [{ a: 1 }])
    const updated = await update(caller, base.digest, [{ append: { row: { c: 3 } } }])
    const c = updated.body.updated_row_digests[0] as string

    // Act
    const res = await fromDigests(caller, [c])

    // Assess
    expect(await values(caller, res.body.digest)).toEqual([{ c: 3 }])
  })

  it('answers 404 naming the rows the project does not hold, also rows of another project, and stores nothing', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const other = await newProjectCaller()
    const mine = await create(caller, [{ a: 1 }])
    const theirs = await create(other, [{ secret: 1 }])
    const digests = [mine.row_digests[0] as string, theirs.row_digests[0] as string, 'nope']

    // Act
    const res = await fromDigests(caller, digests)
    const stats = await send(
      statsApp,
      '/table/query_stats',
      { project_id: caller.project, digest: tableDigest(digests) },
      caller,
    )

    // Assess
    expect(res).toEqual({ status: 404, body: { reason: `Table rows not found: ${theirs.row_digests[0]}, nope` } })
    expect(stats.status).toBe(404)
  })

  it('answers 409 when the expected digest differs, before looking for rows', async () => {
    const caller = await newProjectCaller()
    const res = await fromDigests(caller, ['nope'], { expected_digest: 'wrong' })
    expect(res).toEqual({
      status: 409,
      body: { reason: `Client table (1 rows) digest wrong != server digest ${tableDigest(['nope'])}` },
    })
  })
})

describe('POST /table/query_stats', () => {
  it('counts the rows of a table and answers 404 for an unknown one', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const { digest } = await create(caller, [{ x: 1 }, { x: 1 }, { x: 2 }])

    // Act
    const known = await send(statsApp, '/table/query_stats', { project_id: caller.project, digest }, caller)
    const unknown = await send(statsApp, '/table/query_stats', { project_id: caller.project, digest: EMPTY }, caller)

    // Assess
    expect(known).toEqual({ status: 200, body: { count: 3 } })
    expect(unknown).toEqual({ status: 404, body: { reason: `Table ${caller.project}:${EMPTY} not found` } })
  })
})

describe('POST /table/query_stats_batch', () => {
  it('answers the known tables in the order asked, once each, with sizes only when asked', async () => {
    // Prepare: sizes are len(json.dumps(row)): '{"x": 1}' is 8, '{"t": "\\u00e9"}' is 15
    const caller = await newProjectCaller()
    const one = await create(caller, [{ x: 1 }, { x: 1 }])
    const two = await create(caller, [{ t: 'é' }])
    const empty = await create(caller, [])
    const digests = [two.digest, 'unknown', one.digest, two.digest, empty.digest]
    const batch = (extra: Record<string, unknown>) =>
      send(statsBatchApp, '/table/query_stats_batch', { project_id: caller.project, digests, ...extra }, caller)

    // Act
    const plain = await batch({})
    const sized = await batch({ include_storage_size: true })
    const none = await batch({ digests: null })

    // Assess
    expect(plain.body).toEqual({
      tables: [
        { count: 1, digest: two.digest, storage_size_bytes: null },
        { count: 2, digest: one.digest, storage_size_bytes: null },
        { count: 0, digest: empty.digest, storage_size_bytes: null },
      ],
    })
    expect(sized.body).toEqual({
      tables: [
        { count: 1, digest: two.digest, storage_size_bytes: 15 },
        { count: 2, digest: one.digest, storage_size_bytes: 16 },
        { count: 0, digest: empty.digest, storage_size_bytes: 0 },
      ],
    })
    expect(TableQueryStatsBatchResSchema.parse(sized.body)).toEqual(sized.body)
    expect(none).toEqual({ status: 200, body: { tables: [] } })
  })

  it('sizes tables copied by table/update and table/create_from_digests from their rows', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const base = await create(caller, [{ x: 1 }, { t: 'é' }])
    const updated = await update(caller, base.digest, [{ pop: { index: 0 } }, { append: { row: { y: 'ab' } } }])
    const copied = await fromDigests(caller, [...base.row_digests, ...base.row_digests])

    // Act
    const res = await send(
      statsBatchApp,
      '/table/query_stats_batch',
      { project_id: caller.project, digests: [updated.body.digest, copied.body.digest], include_storage_size: true },
      caller,
    )

    // Assess: '{"y": "ab"}' is 11
    expect(res.body.tables.map((t: { storage_size_bytes: number }) => t.storage_size_bytes)).toEqual([26, 46])
  })
})

describe('table rows with numbers JSON.parse would change', () => {
  it('answers 1.0 and integers beyond 2^53 as created, through table/query, sorting, updates and copies (QA)', async () => {
    // Prepare: a Python client reads rows back and republishes them; a row read back as {"score": 1} hashes to
    // another digest, so a dataset read and saved again became a new version.
    const caller = await newProjectCaller()
    const body = (rows: string) => `{"table": {"project_id": "${caller.project}", "rows": [${rows}]}}`
    const created = await sendText(
      createApp,
      '/table/create',
      body('{"score": 1.0, "seed": 12345678901234567891}, {"score": 0.5}'),
      caller,
    )
    const { digest, row_digests } = JSON.parse(created.text) as { digest: string; row_digests: string[] }
    const updated = await sendText(
      updateApp,
      '/table/update',
      `{"project_id": "${caller.project}", "base_digest": "${digest}", "updates": [{"append": {"row": {"score": 2.0}}}]}`,
      caller,
    )
    const copyOf = (JSON.parse(updated.text) as { digest: string }).digest
    const copied = await send(
      fromDigestsApp,
      '/table/create_from_digests',
      { project_id: caller.project, row_digests },
      caller,
    )

    // Act
    const plain = await sendText(queryApp, '/table/query', { project_id: caller.project, digest }, caller)
    const sorted = await sendText(
      queryApp,
      '/table/query',
      { project_id: caller.project, digest: copyOf, sort_by: [{ field: 'score', direction: 'desc' }] },
      caller,
    )
    const copy = await sendText(
      queryApp,
      '/table/query',
      { project_id: caller.project, digest: copied.body.digest },
      caller,
    )

    // Assess
    const first = `{"digest":"${row_digests[0]}","val":{"score":1.0,"seed":12345678901234567891},"original_index":0}`
    expect(plain.text).toBe(`{"rows":[${first},{"digest":"${row_digests[1]}","val":{"score":0.5},"original_index":1}]}`)
    expect(sorted.text).toMatch(
      /^\{"rows":\[\{"digest":"[^"]+","val":\{"score":2\.0\},"original_index":2\},\{"digest":"[^"]+","val":\{"score":1\.0,"seed":12345678901234567891\}/,
    )
    expect(copy.text).toContain('"val":{"score":1.0,"seed":12345678901234567891}')
    expect(valDigest({ score: 1 })).not.toBe(row_digests[0])
  })
})

describe('table/update validation', () => {
  it('reports a bad pop or insert against its own operation, not a missing append (QA)', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const base = await create(caller, [{ x: 1 }])

    // Act
    const pop = await update(caller, base.digest, [{ pop: { index: 1.5 } }])
    const insert = await update(caller, base.digest, [{ insert: { index: 0, row: [1] } }])

    // Assess
    expect(pop.status).toBe(422)
    expect(pop.body.detail[0]).toMatchObject({ loc: ['body', 'updates', 0, 'pop', 'index'] })
    expect(insert.status).toBe(422)
    expect(insert.body.detail[0].loc.slice(0, 4)).toEqual(['body', 'updates', 0, 'insert'])
  })
})

describe('table/query sorting integers beyond 2^53', () => {
  it('orders two integers one double apart by their digits, both ways (QA)', async () => {
    // Prepare: 2^53 + 1 and 2^53 are one double; ClickHouse reads 64-bit integers exactly.
    const caller = await newProjectCaller()
    const body = `{"table": {"project_id": "${caller.project}", "rows": [{"v": 9007199254740993}, {"v": 9007199254740992}]}}`
    const created = JSON.parse((await sendText(createApp, '/table/create', body, caller)).text) as { digest: string }
    const sorted = async (direction: string) => {
      const res = await sendText(
        queryApp,
        '/table/query',
        { project_id: caller.project, digest: created.digest, sort_by: [{ field: 'v', direction }] },
        caller,
      )
      return [...res.text.matchAll(/"v":(\d+)/g)].map((m) => m[1])
    }

    // Act
    const asc = await sorted('asc')
    const desc = await sorted('desc')

    // Assess
    expect(asc).toEqual(['9007199254740992', '9007199254740993'])
    expect(desc).toEqual(['9007199254740993', '9007199254740992'])
  })
})
