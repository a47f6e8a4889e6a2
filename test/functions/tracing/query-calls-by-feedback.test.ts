import { randomUUID } from 'node:crypto'
import { beforeAll, describe, expect, it } from 'vitest'
import { app as feedbackApp } from '#functions/tracing/create-feedback/handler'
import { app as deleteApp } from '#functions/tracing/delete-calls/handler'
import { app as statsApp } from '#functions/tracing/query-call-stats/handler'
import { app as streamApp } from '#functions/tracing/stream-query-calls/handler'
import { recordCallDeletions } from '#shared/db/call-liveness'
import { db } from '#shared/db/client'
import { endPart, startPart, writeCalls } from '../../support/calls.js'
import { seedFeedback } from '../../support/feedback.js'
import { addCalls, newQueue } from '../../support/queues.js'
import { newProjectCaller, type ProjectCaller, send } from '../../support/tracing.js'

// Calls filtered and sorted through their feedback and annotation queues (docs/tracing.md §6.2), and the ref
// filters with a version wildcard (docs/tracing.md §5).

const get = (path: string) => ({ $getField: path })
const lit = (v: unknown) => ({ $literal: v })
const SCORE = 'feedback.[wandb.runnable.relevance].payload.output.score'

type Fixture = {
  caller: ProjectCaller
  ids: Record<'c1' | 'c2' | 'c3' | 'c4' | 'c5' | 'c6', string>
  queue: string
  runnableRef: string
}
let fx: Fixture

async function stream(body: Record<string, unknown>): Promise<{ status: number; names: string[]; body: unknown }> {
  const res = await streamApp.request('/calls/stream_query', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...fx.caller.basic },
    body: JSON.stringify({ project_id: fx.caller.project, ...body }),
  })
  const text = await res.text()
  if (res.status !== 200) return { status: res.status, names: [], body: JSON.parse(text) }
  const byId = new Map(Object.entries(fx.ids).map(([name, id]) => [id, name]))
  const lines = text.split('\n').filter((l) => l !== '')
  const names = lines.map((l) => byId.get((JSON.parse(l) as { id: string }).id) ?? '?')
  return { status: res.status, names, body: undefined }
}

const names = async (body: Record<string, unknown>) => (await stream(body)).names
const stats = (body: Record<string, unknown>) =>
  send(statsApp, '/calls/query_stats', { project_id: fx.caller.project, ...body }, fx.caller)

beforeAll(async () => {
  const caller = await newProjectCaller()
  const p = caller.project
  const ids = { c1: '', c2: '', c3: '', c4: '', c5: '', c6: '' }
  for (const name of Object.keys(ids) as (keyof typeof ids)[]) ids[name] = randomUUID()
  // c4 reads dataset v1; c5 returns dataset v2 (refs recorded for input_refs / output_refs).
  await writeCalls(
    caller,
    (Object.keys(ids) as (keyof typeof ids)[]).map((name, i) => ({
      start: startPart(p, {
        id: ids[name],
        started_at: `2025-01-01T00:00:0${i + 1}Z`,
        inputs: name === 'c4' ? { dataset: `weave:///${p}/object/ds:v1` } : {},
      }),
      end: endPart(p, ids[name], {
        ended_at: `2025-01-01T00:00:0${i + 1}.500Z`,
        output: name === 'c5' ? { best: `weave:///${p}/object/ds:v2` } : null,
      }),
    })),
  )
  const runnableRef = `weave:///${p}/op/relevance:abc`
  const score = (name: keyof typeof ids, value: number, at: string) =>
    seedFeedback(
      p,
      at,
      { output: { score: value, passed: value > 0.5 } },
      {
        weave_ref: `weave:///${p}/call/${ids[name]}`,
        feedback_type: 'wandb.runnable.relevance',
        runnable_ref: runnableRef,
        call_ref: `weave:///${p}/call/${randomUUID()}`,
      },
    )
  await score('c1', 0.9, '2025-02-01T00:00:00Z')
  await score('c2', 0.3, '2025-02-01T00:00:01Z')
  // c3 was scored twice: its newest score (0.2) is the one its field reads.
  await score('c3', 0.7, '2025-02-01T00:00:02Z')
  await score('c3', 0.2, '2025-02-01T00:00:03Z')
  await score('c6', 0.95, '2025-02-01T00:00:04Z')
  await seedFeedback(
    p,
    '2025-02-01T00:00:05Z',
    { note: 'check' },
    {
      weave_ref: `weave:///${p}/call/${ids.c5}`,
      feedback_type: 'wandb.note.1',
    },
  )
  // Feedback on an object and on another project's call: never a call of this project.
  await seedFeedback(
    p,
    '2025-02-01T00:00:06Z',
    { output: { score: 1 } },
    {
      weave_ref: `weave:///${p}/object/ds:v1`,
      feedback_type: 'wandb.runnable.relevance',
    },
  )
  await seedFeedback(
    p,
    '2025-02-01T00:00:07Z',
    { output: { score: 1 } },
    {
      weave_ref: `weave:///${p}-other/call/${ids.c2}`,
      feedback_type: 'wandb.runnable.relevance',
    },
  )
  const reaction = await send(
    feedbackApp,
    '/feedback/create',
    {
      project_id: p,
      weave_ref: `weave:///${p}/call/${ids.c1}`,
      feedback_type: 'wandb.reaction.1',
      payload: { emoji: '👍' },
    },
    caller,
  )
  if (reaction.status !== 200) throw new Error(`reaction: ${reaction.status}`)
  const queue = await newQueue(caller)
  await addCalls(caller, queue, [ids.c2, ids.c4, ids.c6])
  const deleted = await send(deleteApp, '/calls/delete', { project_id: p, call_ids: [ids.c6] }, caller)
  if (deleted.status !== 200) throw new Error(`delete: ${deleted.status}`)
  fx = { caller, ids, queue, runnableRef }
})

describe('calls/stream_query by feedback', () => {
  it.each([
    ['score > 0.5 (newest score per call, deleted calls out)', { $gt: [get(SCORE), lit(0.5)] }, ['c1']],
    ['score >= 0.2', { $gte: [get(SCORE), lit(0.2)] }, ['c1', 'c2', 'c3']],
    ['any type: [*] score > 0.5', { $gt: [get('feedback.[*].payload.output.score'), lit(0.5)] }, ['c1']],
    [
      'a boolean in the payload',
      { $eq: [get('feedback.[wandb.runnable.relevance].payload.output.passed'), lit(true)] },
      ['c1'],
    ],
    ['a reaction', { $eq: [get('feedback.[wandb.reaction.1].payload.emoji'), lit('👍')] }, ['c1']],
    [
      'the runnable ref column',
      { $eq: [get('feedback.[wandb.runnable.relevance].runnable_ref'), lit('weave:///REF')] },
      ['c1', 'c2', 'c3'],
    ],
    [
      'a note, case-insensitively',
      { $contains: { input: get('feedback.[wandb.note.1].payload.note'), substr: lit('CHE'), case_insensitive: true } },
      ['c5'],
    ],
    [
      'a negation matches calls without that feedback',
      { $not: [{ $eq: [get('feedback.[wandb.note.1].payload.note'), lit('check')] }] },
      ['c1', 'c2', 'c3', 'c4'],
    ],
    [
      'a negated numeric comparison is NULL without feedback',
      { $not: [{ $gt: [get(SCORE), lit(0.5)] }] },
      ['c2', 'c3'],
    ],
    [
      'an $or of feedback and a call column',
      { $or: [{ $gt: [get(SCORE), lit(0.5)] }, { $eq: [get('id'), lit('ID:c4')] }] },
      ['c1', 'c4'],
    ],
    [
      'feedback of two types in one conjunct each',
      {
        $and: [{ $gt: [get(SCORE), lit(0.5)] }, { $eq: [get('feedback.[wandb.reaction.1].payload.emoji'), lit('👍')] }],
      },
      ['c1'],
    ],
  ])('filters by %s', async (_name, expr, expected) => {
    // Prepare
    const json = JSON.stringify(expr).replace('weave:///REF', fx.runnableRef).replace('ID:c4', fx.ids.c4)

    // Act
    const got = await names({ query: { $expr: JSON.parse(json) } })

    // Assess
    expect(got).toEqual(expected)
  })

  it('sorts by a feedback value, calls without it last in either direction', async () => {
    // Act
    const desc = await names({ sort_by: [{ field: SCORE, direction: 'desc' }] })
    const asc = await names({ sort_by: [{ field: SCORE, direction: 'asc' }] })

    // Assess
    const [c4, c5] = [fx.ids.c4, fx.ids.c5].sort() as [string, string]
    const missing = [c4 === fx.ids.c4 ? 'c4' : 'c5', c5 === fx.ids.c5 ? 'c5' : 'c4']
    expect(desc).toEqual(['c1', 'c2', 'c3', ...missing])
    expect(asc).toEqual(['c3', 'c2', 'c1', ...missing])
  })

  it('combines a feedback condition with the filter, limit and offset', async () => {
    // Act
    const byIds = await names({
      filter: { call_ids: [fx.ids.c1, fx.ids.c2, fx.ids.c4] },
      query: { $expr: { $gte: [get(SCORE), lit(0.25)] } },
    })
    const paged = await names({
      query: { $expr: { $gte: [get(SCORE), lit(0.2)] } },
      sort_by: [{ field: 'started_at', direction: 'desc' }],
      limit: 1,
      offset: 1,
    })
    const unordered = await names({ query: { $expr: { $gte: [get(SCORE), lit(0.2)] } }, sort_by: [], limit: 2 })

    // Assess
    expect(byIds).toEqual(['c1', 'c2'])
    expect(paged).toEqual(['c2'])
    expect(unordered).toHaveLength(2)
  })

  it('reads the feedback listing and the matching calls by key, never a call index', async () => {
    // Prepare
    const seen: string[] = []
    db().middlewareStack.add(
      (next, context) => async (args) => {
        const input = (args as { input: Record<string, unknown> }).input
        const values = (input.ExpressionAttributeValues ?? {}) as Record<string, unknown>
        if (context.commandName === 'QueryCommand') seen.push(`Query ${String(values[':pk'])}`)
        if (context.commandName?.startsWith('BatchGet')) {
          const requests = Object.values(input.RequestItems as Record<string, { Keys: unknown[] }>)
          seen.push(`BatchGet ${requests.reduce((n, r) => n + r.Keys.length, 0)}`)
        }
        return next(args)
      },
      { step: 'initialize', name: 'recordReads' },
    )

    // Act
    let got: string[]
    try {
      got = await names({ query: { $expr: { $gt: [get(SCORE), lit(0.5)] } } })
    } finally {
      db().middlewareStack.remove('recordReads')
    }

    // Assess
    expect(got).toEqual(['c1'])
    expect(seen.some((s) => s.startsWith('Query FBT#'))).toBe(true)
    expect(seen.filter((s) => s.startsWith('Query CALL'))).toEqual([])
    // The two calls scored above 0.5 (c1, and c6, found deleted), start and end, read by key.
    expect(seen.filter((s) => s.startsWith('BatchGet'))).toEqual(['BatchGet 4'])
  })
})

describe('calls/stream_query by feedback in a project with a long name', () => {
  it('finds calls whose feedback refs enter the index keys as digests', async () => {
    // Prepare
    const owner = await newProjectCaller()
    const caller = { ...owner, project: `${owner.entity}/${'p'.repeat(220)}` }
    const [scored, other] = [randomUUID(), randomUUID()]
    await writeCalls(
      caller,
      [scored, other].map((id) => ({ start: startPart(caller.project, { id }), end: endPart(caller.project, id) })),
    )
    await seedFeedback(
      caller.project,
      '2025-02-01T00:00:00Z',
      { output: { score: 0.8 } },
      {
        weave_ref: `weave:///${caller.project}/call/${scored}`,
        feedback_type: 'wandb.runnable.relevance',
      },
    )

    // Act
    const res = await send(
      statsApp,
      '/calls/query_stats',
      { project_id: caller.project, query: { $expr: { $gt: [get(SCORE), lit(0.5)] } } },
      caller,
    )

    // Assess
    expect(res).toEqual({ status: 200, body: { count: 1, has_more: false, total_storage_size_bytes: null } })
  })
})

describe('calls/stream_query by annotation queue', () => {
  it.each([
    [
      'members of the queue (deleted calls out)',
      { $eq: [get('annotation_queue_items.queue_id'), lit('Q')] },
      ['c2', 'c4'],
    ],
    ['either operand order', { $eq: [lit('Q'), get('annotation_queue_items.queue_id')] }, ['c2', 'c4']],
    [
      'membership and a feedback condition',
      { $and: [{ $eq: [get('annotation_queue_items.queue_id'), lit('Q')] }, { $gt: [get(SCORE), lit(0.25)] }] },
      ['c2'],
    ],
    ['a queue without items', { $eq: [get('annotation_queue_items.queue_id'), lit('no-such-queue')] }, []],
    ['no queue id to join on ($in)', { $in: [get('annotation_queue_items.queue_id'), [lit('Q')]] }, []],
    ['a negation still joins the queue', { $not: [{ $eq: [get('annotation_queue_items.queue_id'), lit('Q')] }] }, []],
  ])('filters by %s', async (_name, expr, expected) => {
    // Prepare
    const query = { $expr: JSON.parse(JSON.stringify(expr).replaceAll('"Q"', JSON.stringify(fx.queue))) }

    // Act
    const got = await names({ query })

    // Assess
    expect(got).toEqual(expected)
  })
})

describe('calls/stream_query by refs', () => {
  it.each([
    [{ input_refs: ['weave:///P/object/ds:v1'] }, ['c4']],
    [{ input_refs: ['weave:///P/object/ds:*'] }, ['c4']],
    [{ input_refs: ['weave:///P/object/ds:v2'] }, []],
    [{ output_refs: ['weave:///P/object/ds:*'] }, ['c5']],
    [{ output_refs: ['weave:///P/object/d:*'] }, []],
    [{ input_refs: ['weave:///P/object/other:*', 'weave:///P/object/ds:v1'] }, ['c4']],
  ])('filters by %j', async (filter, expected) => {
    // Prepare
    const body = JSON.parse(JSON.stringify(filter).replaceAll('weave:///P/', `weave:///${fx.caller.project}/`))

    // Act
    const got = await names({ filter: body })

    // Assess
    expect(got).toEqual(expected)
  })
})

describe('calls/query_stats by feedback and queue', () => {
  it('counts the calls a feedback or queue condition selects', async () => {
    // Act
    const high = await stats({ query: { $expr: { $gt: [get(SCORE), lit(0.5)] } } })
    const scored = await stats({ query: { $expr: { $gte: [get(SCORE), lit(0.1)] } }, limit: 2 })
    const queued = await stats({ query: { $expr: { $eq: [get('annotation_queue_items.queue_id'), lit(fx.queue)] } } })
    const refs = await stats({ filter: { input_refs: [`weave:///${fx.caller.project}/object/ds:*`] } })

    // Assess
    expect(high.body).toEqual({ count: 1, has_more: false, total_storage_size_bytes: null })
    expect(scored.body).toEqual({ count: 2, has_more: true, total_storage_size_bytes: null })
    expect(queued.body).toEqual({ count: 2, has_more: false, total_storage_size_bytes: null })
    expect(refs.body).toEqual({ count: 1, has_more: false, total_storage_size_bytes: null })
  })
})

describe('unknown and unsupported fields', () => {
  it.each([
    ['nope', 'Field nope is not allowed'],
    ['feedback', 'Field feedback is not allowed'],
    ['feedback.foo', 'Invalid feedback path: foo'],
    ['feedback.[wandb.note.1]', 'Invalid feedback path: [wandb.note.1]'],
    ['feedback.[*].feedback_type', 'Invalid feedback path: feedback_type'],
    ['feedback.[x].payloads.a', 'Invalid feedback path: payloads.a'],
    ['annotation_queue_items.call_id', 'Invalid annotation_queue_items field: call_id'],
    ['storage_size_bytes', 'Field storage_size_bytes is not allowed'],
    ['total_storage_size_bytes', 'Field total_storage_size_bytes is not allowed'],
  ])('answers 422 for the query field %s, in both routes, before reading any call', async (field, reason) => {
    // Prepare
    const query = { $expr: { $eq: [get(field), lit(1)] } }
    const empty = await newProjectCaller()

    // Act
    const streamed = await stream({ query })
    const counted = await stats({ query })
    const onEmpty = await send(statsApp, '/calls/query_stats', { project_id: empty.project, query }, empty)

    // Assess
    expect(streamed).toEqual({ status: 422, names: [], body: { reason } })
    expect(counted).toEqual({ status: 422, body: { reason } })
    expect(onEmpty).toEqual({ status: 422, body: { reason } })
  })

  it('answers 422 for an unknown sort field and 400 for sorting by a storage size', async () => {
    // Act
    const unknown = await stream({ sort_by: [{ field: 'nope', direction: 'asc' }] })
    const badFeedback = await stream({ sort_by: [{ field: 'feedback.[x]', direction: 'asc' }] })
    const storage = await stream({ sort_by: [{ field: 'total_storage_size_bytes', direction: 'asc' }] })

    // Assess
    expect(unknown).toEqual({ status: 422, names: [], body: { reason: 'Field nope is not allowed' } })
    expect(badFeedback).toEqual({ status: 422, names: [], body: { reason: 'Invalid feedback path: [x]' } })
    expect(storage).toEqual({
      status: 400,
      names: [],
      body: { reason: 'Field total_storage_size_bytes is not allowed in ORDER BY' },
    })
  })

  it('accepts the ref array columns, where $contains is membership', async () => {
    // Act
    const got = await names({
      query: {
        $expr: {
          $contains: { input: get('input_refs'), substr: lit(`weave:///${fx.caller.project}/object/ds:v1`) },
        },
      },
    })

    // Assess
    expect(got).toEqual(['c4'])
  })
})

describe('calls/query_stats by feedback alone, from flagged rows and deletion markers', () => {
  const QUALITY = 'feedback.[quality].payload.output.score'
  const above = (v: number) => ({ $expr: { $gt: [get(QUALITY), lit(v)] } })

  async function startCalls(caller: ProjectCaller, ids: string[], project = caller.project): Promise<void> {
    await writeCalls(
      caller,
      ids.map((id) => ({ start: startPart(project, { id }), end: endPart(project, id) })),
    )
  }

  // Through feedback/create, which records whether the call is live at that moment.
  async function score(caller: ProjectCaller, ref: string, value: number, project = caller.project): Promise<void> {
    const body = {
      project_id: project,
      weave_ref: ref,
      feedback_type: 'quality',
      payload: { output: { score: value } },
    }
    const res = await send(feedbackApp, '/feedback/create', body, caller)
    if (res.status !== 200) throw new Error(`feedback/create: ${res.status}`)
  }
  const callRef = (project: string, id: string) => `weave:///${project}/call/${id}`

  async function remove(caller: ProjectCaller, ids: string[], project = caller.project): Promise<void> {
    const res = await send(deleteApp, '/calls/delete', { project_id: project, call_ids: ids }, caller)
    if (res.status !== 200) throw new Error(`calls/delete: ${res.status}`)
  }

  const count = (caller: ProjectCaller, extra: Record<string, unknown> = {}, project = caller.project) =>
    send(statsApp, '/calls/query_stats', { project_id: project, query: above(0.5), ...extra }, caller)

  // The reads sent while `act` runs: `Query <partition key prefix>` and `BatchGet <keys>`.
  async function readsDuring<T>(act: () => Promise<T>): Promise<{ result: T; reads: string[] }> {
    const reads: string[] = []
    db().middlewareStack.add(
      (next, context) => async (args) => {
        const input = (args as { input: Record<string, unknown> }).input
        const values = (input.ExpressionAttributeValues ?? {}) as Record<string, unknown>
        if (context.commandName === 'QueryCommand') reads.push(`Query ${String(values[':pk']).split('#')[0]}`)
        if (context.commandName?.startsWith('BatchGet')) {
          const requests = Object.values(input.RequestItems as Record<string, { Keys: unknown[] }>)
          reads.push(`BatchGet ${requests.reduce((n, r) => n + r.Keys.length, 0)}`)
        }
        return next(args)
      },
      { step: 'initialize', name: 'readsDuring' },
    )
    try {
      return { result: await act(), reads }
    } finally {
      db().middlewareStack.remove('readsDuring')
    }
  }
  const keyedReads = (reads: string[]) => reads.filter((r) => r.startsWith('BatchGet'))
  const callIndexReads = (reads: string[]) => reads.filter((r) => /^Query CALL(?!DEL$)/.test(r))
  const answer = (count: number, hasMore = false) => ({
    status: 200,
    body: { count, has_more: hasMore, total_storage_size_bytes: null },
  })

  it('counts calls from rows written while their call was live, reading no call by key and no call index', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()]
    await startCalls(caller, [a, b, c])
    await score(caller, callRef(caller.project, a), 0.9)
    await score(caller, callRef(caller.project, b), 0.8)
    await score(caller, callRef(caller.project, c), 0.2)

    // Act
    const { result, reads } = await readsDuring(() => count(caller))

    // Assess
    expect(result).toEqual(answer(2))
    expect(keyedReads(reads)).toEqual([])
    expect(callIndexReads(reads)).toEqual([])
    expect(reads.filter((r) => r === 'Query FBT')).toHaveLength(1)
    expect(reads.filter((r) => r === 'Query CALLDEL')).toHaveLength(8)
  })

  it('leaves out a call deleted after its feedback was written, reading only that call by key', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const [kept, deleted] = [randomUUID(), randomUUID()]
    await startCalls(caller, [kept, deleted])
    await score(caller, callRef(caller.project, kept), 0.9)
    await score(caller, callRef(caller.project, deleted), 0.9)
    await remove(caller, [deleted])

    // Act
    const { result, reads } = await readsDuring(() => count(caller))

    // Assess
    expect(result).toEqual(answer(1))
    expect(keyedReads(reads)).toEqual(['BatchGet 1'])
  })

  it('counts a call scored before it started once it exists, and never a call that never started', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const [late, never] = [randomUUID(), randomUUID()]
    await score(caller, callRef(caller.project, late), 0.9)
    await score(caller, callRef(caller.project, never), 0.9)
    const before = await count(caller)
    await startCalls(caller, [late])

    // Act
    const { result, reads } = await readsDuring(() => count(caller))

    // Assess
    expect(before).toEqual(answer(0))
    expect(result).toEqual(answer(1))
    expect(keyedReads(reads)).toEqual(['BatchGet 2'])
  })

  it('counts rows stored before calls were flagged by reading their calls, as before', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const p = caller.project
    const [live, deleted, never, both] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()]
    await startCalls(caller, [live, deleted, both])
    await remove(caller, [deleted])
    const payload = { output: { score: 0.9 } }
    for (const [i, id] of [live, deleted, never, both].entries()) {
      await seedFeedback(p, `2025-02-01T00:00:0${i}Z`, payload, { weave_ref: callRef(p, id), feedback_type: 'quality' })
    }
    // One row of `both` is flagged: that one vouches for its call.
    await score(caller, callRef(p, both), 0.1)

    // Act
    const { result, reads } = await readsDuring(() =>
      count(caller, { query: { $expr: { $gt: [get(QUALITY), lit(0.05)] } } }),
    )

    // Assess
    expect(result).toEqual(answer(2))
    expect(keyedReads(reads)).toEqual(['BatchGet 3'])
  })

  it('still counts a call whose delete stopped after writing its marker, reading it by key', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const id = randomUUID()
    await startCalls(caller, [id])
    await score(caller, callRef(caller.project, id), 0.9)
    await recordCallDeletions(caller.project, [id])

    // Act
    const { result, reads } = await readsDuring(() => count(caller))

    // Assess
    expect(result).toEqual(answer(1))
    expect(keyedReads(reads)).toEqual(['BatchGet 1'])
  })

  it('reads the flagged calls by key when the project has many more deletion markers than candidates', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const scored = randomUUID()
    const gone = Array.from({ length: 20 }, () => randomUUID())
    await startCalls(caller, [scored, ...gone])
    await score(caller, callRef(caller.project, scored), 0.9)
    await remove(caller, gone)

    // Act
    const { result, reads } = await readsDuring(() => count(caller))

    // Assess
    expect(result).toEqual(answer(1))
    expect(keyedReads(reads)).toEqual(['BatchGet 1'])
  })

  it('answers limit and has_more exactly as the selection of the same calls does', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const p = caller.project
    const flagged = Array.from({ length: 4 }, () => randomUUID())
    const [legacy, deleted, never] = [randomUUID(), randomUUID(), randomUUID()]
    await startCalls(caller, [...flagged, legacy, deleted])
    for (const id of [...flagged, deleted]) await score(caller, callRef(p, id), 0.9)
    await remove(caller, [deleted])
    for (const id of [legacy, never]) {
      await seedFeedback(
        p,
        '2025-02-01T00:00:00Z',
        { output: { score: 0.7 } },
        { weave_ref: callRef(p, id), feedback_type: 'quality' },
      )
    }
    // Every call of the project is the caller's: the filter selects them all, but sends the count down the selection.
    const selection = { filter: { wb_user_ids: [caller.userId] } }
    const limits = [undefined, 0, 2, 4, 5, 6, 100]

    // Act
    const fast = await Promise.all(limits.map((limit) => count(caller, { limit })))
    const selected = await Promise.all(limits.map((limit) => count(caller, { limit, ...selection })))

    // Assess
    expect(fast).toEqual([
      answer(5),
      answer(0, true),
      answer(2, true),
      answer(4, true),
      answer(5),
      answer(5),
      answer(5),
    ])
    expect(selected).toEqual(fast)
  })

  it("never counts another project's feedback, calls or deletions", async () => {
    // Prepare
    const caller = await newProjectCaller()
    const other = `${caller.entity}/p-${randomUUID().slice(0, 8)}`
    const [shared, theirs] = [randomUUID(), randomUUID()]
    await startCalls(caller, [shared])
    await startCalls(caller, [shared, theirs], other)
    await score(caller, callRef(caller.project, shared), 0.9)
    // Feedback in this project on the other project's call, and the other project's own feedback and deletion.
    await score(caller, callRef(other, theirs), 0.9)
    await score(caller, callRef(other, shared), 0.9, other)
    await score(caller, callRef(other, theirs), 0.9, other)
    await remove(caller, [shared], other)

    // Act
    const mine = await readsDuring(() => count(caller))
    const theirCount = await count(caller, {}, other)

    // Assess
    expect(mine.result).toEqual(answer(1))
    expect(keyedReads(mine.reads)).toEqual([])
    expect(theirCount).toEqual(answer(1))
  })
})
