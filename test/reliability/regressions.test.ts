import { describe, expect, it } from 'vitest'
import { FUNCTIONS } from '#functions/manifest'
import { loadFunction } from '../../scripts/local/app.js'
import { newCaller } from '../support/auth.js'
import { startPart } from '../support/calls.js'

// Inputs the fuzzer found answered with a 500; each is pinned here so the fix stays.
const LONG = 'x'.repeat(3_000)

async function send(method: string, path: string, body: unknown, headers: Record<string, string>) {
  const entry = FUNCTIONS.find((f) =>
    f.routes.some(
      (r) =>
        r.method === method &&
        new RegExp(`^${r.path.replace(/:[A-Za-z_]+/g, '[^/]+')}$`).test(path.split('?')[0] ?? ''),
    ),
  )
  if (!entry) throw new Error(`no function serves ${method} ${path}`)
  const { app } = await loadFunction(entry)
  const res = await app.fetch(
    new Request(`http://loom.test${path}`, {
      method,
      headers: { ...headers, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }),
  )
  return { status: res.status, json: (await res.json()) as Record<string, unknown> }
}

describe('inputs that once caused a 500', () => {
  it('answers ids too long to be table keys with a 4xx on every route that looks them up', async () => {
    // Prepare
    const caller = await newCaller()
    const p = `${caller.entity}/proj`
    const probes: [string, string, unknown][] = [
      ['POST', '/call/read', { project_id: p, id: LONG }],
      ['POST', '/call/update', { project_id: p, call_id: LONG, display_name: 'x' }],
      ['POST', '/calls/delete', { project_id: p, call_ids: [LONG] }],
      ['POST', '/calls/usage', { project_id: p, call_ids: [LONG] }],
      ['POST', '/obj/read', { project_id: p, object_id: 'o', digest: LONG }],
      ['POST', '/table/query', { project_id: p, digest: LONG }],
      ['POST', '/table/update', { project_id: p, base_digest: LONG, updates: [] }],
      ['POST', '/table/create_from_digests', { project_id: p, row_digests: [LONG] }],
      ['POST', '/table/query_stats', { project_id: p, digest: LONG }],
      ['POST', '/table/query_stats_batch', { project_id: p, digests: [LONG] }],
      ['POST', '/file/content', { project_id: p, digest: LONG }],
      [
        'POST',
        '/feedback/replace',
        {
          project_id: p,
          feedback_id: LONG,
          weave_ref: 'weave:///e/p/call/c',
          feedback_type: 'note',
          payload: { note: 'x' },
        },
      ],
      ['GET', `/annotation_queues/${LONG}?project_id=${encodeURIComponent(p)}`, undefined],
      ['POST', '/annotation_queues/stats', { project_id: p, queue_ids: [LONG] }],
      ['GET', `/v1/preview/models/${LONG}/metrics`, undefined],
    ]

    // Act
    const results = []
    for (const [method, path, body] of probes) {
      const { status } = await send(method, path, body, caller.bearer)
      results.push(`${method} ${path.slice(0, 40)} → ${status >= 400 && status < 500 ? '4xx' : status}`)
    }

    // Assess
    expect(results.filter((r) => !r.endsWith('4xx') && !r.endsWith('200'))).toEqual([])
  })

  it("answers 400 for a project name with '#', so no project shares keys with ids of another", async () => {
    // Prepare: keys join the project and the id with '#' (OBJ#<project>#<object>): an object `o` of project `e/p#x`
    // was read back as object `x#o` of project `e/p` (security QA; same entity only).
    const caller = await newCaller()
    const odd = `${caller.entity}/p#x`
    const obj = { project_id: odd, object_id: 'o', val: { v: 1 } }

    // Act
    const created = await send('POST', '/obj/create', { obj }, caller.bearer)
    const started = await send('POST', '/call/start', { start: startPart(odd) }, caller.bearer)
    const queried = await send('POST', '/calls/stream_query', { project_id: odd }, caller.bearer)
    const foreign = await send(
      'POST',
      '/obj/read',
      { project_id: 'other-entity/p#x', object_id: 'o', digest: 'latest' },
      caller.bearer,
    )
    const plain = await send(
      'POST',
      '/obj/read',
      { project_id: `${caller.entity}/p`, object_id: 'x#o', digest: 'latest' },
      caller.bearer,
    )

    // Assess
    expect([created.status, started.status, queried.status]).toEqual([400, 400, 400])
    expect(created.json.reason).toContain("cannot contain characters: '#'")
    expect(foreign.status).toBe(403)
    expect(plain.status).toBe(404)
  })

  it('answers 400 for every project id W&B refuses, on every family, after the entity check', async () => {
    // Prepare: `e/`, `e//p` and `e/../x` were projects of their own (security QA); W&B refuses an empty project name,
    // these characters and control characters.
    const caller = await newCaller()
    const names = ['', '/p', '../x', 'p:x', 'p%41', 'p?x', 'p\\x', 'p\nx', 'p\u0000']
    const ids = [caller.entity, ...names.map((name) => `${caller.entity}/${name}`)]

    // Act
    const answers = []
    for (const id of ids) {
      const stats = await send('POST', '/calls/query_stats', { project_id: id }, caller.bearer)
      const obj = await send('POST', '/obj/create', { obj: { project_id: id, object_id: 'o', val: 1 } }, caller.bearer)
      // A header cannot carry control characters: those ids are only sent in bodies.
      const header = id.includes('\n') || id.includes('\u0000') ? undefined : { ...caller.bearer, 'openai-project': id }
      const usage = header === undefined ? stats : await send('GET', '/v1/models', undefined, header)
      answers.push({ id, statuses: [stats.status, obj.status, usage.status], reason: String(stats.json.reason) })
    }
    const fine = await send('POST', '/calls/query_stats', { project_id: `${caller.entity}/p x.y-z_é` }, caller.bearer)
    const foreign = await send('POST', '/calls/query_stats', { project_id: 'other-entity/p:x' }, caller.bearer)

    // Assess
    for (const { id, statuses, reason } of answers) {
      expect(statuses, id).toEqual([400, 400, 400])
      expect(reason, id).toMatch(/cannot be empty|cannot contain characters|expected '<entity>\/<project>'/)
    }
    expect(answers.map((a) => a.reason.replace(/^.*: /, ''))).toContain("'\\u0000'")
    expect(fine.status).toBe(200)
    expect(foreign.status).toBe(403)
  })

  it('refuses epoch datetimes a stored datetime cannot hold with 422', async () => {
    // Prepare
    const caller = await newCaller()
    const start = startPart(`${caller.entity}/proj`, { started_at: 1e308 })

    // Act
    const res = await send('POST', '/call/start', { start }, caller.bearer)

    // Assess
    expect(res.status).toBe(422)
    expect(res.json.detail).toEqual([expect.objectContaining({ loc: ['body', 'start', 'started_at'] })])
  })

  it('refuses cost numbers DynamoDB cannot store with 422', async () => {
    // Prepare
    const caller = await newCaller()
    const body = {
      project_id: `${caller.entity}/proj`,
      costs: { m: { prompt_token_cost: 2 ** 53 + 2, completion_token_cost: 1e-200 } },
    }

    // Act
    const res = await send('POST', '/cost/create', body, caller.bearer)

    // Assess
    expect(res.status).toBe(422)
    expect((res.json.detail as { loc: unknown[] }[]).map((d) => d.loc)).toEqual([
      ['body', 'costs', 'm', 'prompt_token_cost'],
      ['body', 'costs', 'm', 'completion_token_cost'],
    ])
  })
})

describe('a batch with one over-long id', () => {
  it('is refused whole: none of its calls is stored', async () => {
    // Prepare
    const caller = await newCaller()
    const p = `${caller.entity}/batch-${Date.now()}`
    const good = startPart(p)
    const batch = [
      { mode: 'start', req: { start: good } },
      { mode: 'start', req: { start: startPart(p, { id: LONG }) } },
    ]

    // Act
    const res = await send('POST', '/call/upsert_batch', { batch }, caller.bearer)
    const read = await send('POST', '/call/read', { project_id: p, id: good.id }, caller.bearer)

    // Assess
    expect(res.status).toBeGreaterThanOrEqual(400)
    expect(res.status).toBeLessThan(500)
    expect(read.json).toEqual({ call: null })
  })
})
