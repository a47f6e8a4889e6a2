import { describe, expect, it } from 'vitest'
import { app as deleteApp } from '#functions/tracing/delete-calls/handler'
import { app as statsApp } from '#functions/tracing/get-annotation-queues-stats/handler'
import { app as itemsApp } from '#functions/tracing/query-annotation-queue-items/handler'
import { app as progressApp } from '#functions/tracing/update-annotation-queue-item-progress/handler'
import { newCaller } from '../../support/auth.js'
import { holdDynamoCommands } from '../../support/hold-dynamo.js'
import { addCalls, newCalls, newQueue } from '../../support/queues.js'
import { newProjectCaller, type ProjectCaller, send } from '../../support/tracing.js'

const items = async (c: ProjectCaller, queueId: string, body: Record<string, unknown> = {}) =>
  (await send(itemsApp, `/annotation_queues/${queueId}/items/query`, { project_id: c.project, ...body }, c)).body.items

const progress = (c: ProjectCaller, queueId: string, itemId: string, annotation_state: string) =>
  send(
    progressApp,
    `/annotation_queues/${queueId}/items/${itemId}/progress`,
    { project_id: c.project, annotation_state },
    c,
  )

async function teammate(owner: ProjectCaller): Promise<ProjectCaller> {
  // A second user of the same entity: its own key, same project.
  return { ...(await newCaller(owner.entity)), project: owner.project }
}

describe('annotation queue items', () => {
  it('counts added and duplicate calls as the contract examples do', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const q = await newQueue(caller)
    const [c1, c2, c3, c4, c5] = await newCalls(caller, 5)

    // Act
    const first = await addCalls(caller, q, [c1 as string, c2 as string, c3 as string])
    const again = await addCalls(caller, q, [c1 as string])
    const more = await addCalls(caller, q, [c1 as string, c2 as string, c3 as string, c4 as string, c5 as string])
    const unknown = await addCalls(caller, q, ['no-such-call'])

    // Assess
    expect(first).toEqual({ added_count: 3, duplicates: 0 })
    expect(again).toEqual({ added_count: 0, duplicates: 1 })
    expect(more).toEqual({ added_count: 2, duplicates: 3 })
    expect(unknown).toEqual({ added_count: 0, duplicates: 0 })
  })

  it('adds a soft-deleted call as Weave does (its call query has no deleted_at filter)', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const q = await newQueue(caller)
    const [c1] = await newCalls(caller, 1)
    const deleted = await send(deleteApp, '/calls/delete', { project_id: caller.project, call_ids: [c1] }, caller)
    expect(deleted.status).toBe(200)

    // Act
    const added = await addCalls(caller, q, [c1 as string])
    const again = await addCalls(caller, q, [c1 as string, c1 as string])

    // Assess
    expect(added).toEqual({ added_count: 1, duplicates: 0 })
    expect(again).toEqual({ added_count: 0, duplicates: 1 })
    expect((await items(caller, q)).map((i: { call_id: string }) => i.call_id)).toEqual([c1])
  })

  it('adds a call once under concurrent requests', async () => {
    const caller = await newProjectCaller()
    const q = await newQueue(caller)
    const [c1] = await newCalls(caller, 1)
    const results = await Promise.all([1, 2, 3, 4].map(() => addCalls(caller, q, [c1 as string])))
    expect(results.reduce((n, r) => n + r.added_count, 0)).toBe(1)
    expect(await items(caller, q)).toHaveLength(1)
  })

  it('counts a call once when two adds both find its claim without an item and write it', async () => {
    // Prepare: every queue item write waits until both adds have reached it, so the second add finds the first's claim
    // before its item exists (as when the first is slow, or failed after claiming) and completes it too.
    const caller = await newProjectCaller()
    const q = await newQueue(caller)
    const [c1] = await newCalls(caller, 1)
    const puts = holdDynamoCommands(
      ({ name, input }) => name === 'PutItemCommand' && JSON.stringify(input).includes('"ITEM#'),
    )

    // Act
    let results: { added_count: number }[]
    try {
      const adding = Promise.all([1, 2].map(() => addCalls(caller, q, [c1 as string])))
      await puts.arrived(2)
      puts.release()
      results = await adding
    } finally {
      puts.stop()
    }

    // Assess: one item, counted by the one add whose write created it
    expect(results.map((r) => r.added_count).sort()).toEqual([0, 1])
    expect(await items(caller, q)).toHaveLength(1)
  })

  it('lists items with call fields copied and state unstarted', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const q = await newQueue(caller)
    const [c1] = await newCalls(caller, 1, 'weave:///e/p/op/judge:1')
    await addCalls(caller, q, [c1 as string])

    // Act
    const [item] = await items(caller, q)

    // Assess
    expect(item).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      project_id: caller.project,
      queue_id: q,
      call_id: c1,
      call_started_at: '2025-01-01T00:00:00Z',
      call_ended_at: '2025-01-01T00:00:01Z',
      call_op_name: 'weave:///e/p/op/judge:1',
      call_trace_id: expect.any(String),
      display_fields: ['input.prompt'],
      added_by: caller.userId,
      annotation_state: 'unstarted',
      annotator_user_id: '',
      created_at: expect.any(String),
      created_by: caller.userId,
      updated_at: expect.any(String),
      deleted_at: null,
      position_in_queue: null,
    })
  })

  it('applies the per-annotator transition table', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const q = await newQueue(caller)
    const ids = await newCalls(caller, 4)
    await addCalls(caller, q, ids)
    const [i1, i2, i3] = (await items(caller, q)).map((i: { id: string }) => i.id)

    // Act
    const start = await progress(caller, q, i1, 'in_progress')
    const same = await progress(caller, q, i1, 'in_progress')
    const done = await progress(caller, q, i1, 'completed')
    const doneAgain = await progress(caller, q, i1, 'completed')
    const back = await progress(caller, q, i1, 'in_progress')
    const skipAfterDone = await progress(caller, q, i1, 'skipped')
    const skip = await progress(caller, q, i2, 'skipped')
    const doneAfterSkip = await progress(caller, q, i2, 'completed')
    const direct = await progress(caller, q, i3, 'completed')
    const unstarted = await progress(caller, q, i3, 'unstarted')
    const missing = await progress(caller, q, 'nope', 'completed')

    // Assess
    expect(start.body.item).toMatchObject({
      id: i1,
      annotation_state: 'in_progress',
      annotator_user_id: caller.userId,
      position_in_queue: null,
    })
    expect(same.body.item.annotation_state).toBe('in_progress')
    expect(done.body.item.annotation_state).toBe('completed')
    expect(doneAgain.status).toBe(200)
    expect(back).toEqual({
      status: 400,
      body: {
        reason:
          "Cannot transition to 'in_progress' when a record already exists. 'in_progress' can only be set on new items.",
      },
    })
    expect(skipAfterDone).toEqual({
      status: 400,
      body: {
        reason:
          "Invalid state transition from 'completed' to 'skipped'. Only transitions from 'in_progress' or 'unstarted' are allowed.",
      },
    })
    expect(skip.body.item.annotation_state).toBe('skipped')
    expect(doneAfterSkip.status).toBe(400)
    expect(direct.body.item.annotation_state).toBe('completed')
    expect(unstarted.status).toBe(400)
    expect(unstarted.body.reason).toMatch(/^Invalid annotation_state 'unstarted'/)
    expect(missing).toEqual({ status: 400, body: { reason: `Queue item 'nope' not found in queue '${q}'` } })
  })

  it('shows the most recent annotator state while stats keep counting completion', async () => {
    // Prepare
    const a = await newProjectCaller()
    const b = await teammate(a)
    const q = await newQueue(a)
    await addCalls(a, q, await newCalls(a, 2))
    const [i1] = (await items(a, q)).map((i: { id: string }) => i.id)

    // Act
    await progress(a, q, i1, 'completed')
    const byB = await progress(b, q, i1, 'in_progress')
    const listed = await items(a, q, { filter: { id: i1 } })
    const stats = await send(statsApp, '/annotation_queues/stats', { project_id: a.project, queue_ids: [q] }, a)

    // Assess
    expect(byB.body.item).toMatchObject({ annotation_state: 'in_progress', annotator_user_id: b.userId })
    expect(listed[0]).toMatchObject({ annotation_state: 'in_progress', annotator_user_id: b.userId })
    expect(stats.body).toEqual({ stats: [{ queue_id: q, total_items: 2, completed_items: 1 }] })
  })

  it('ends consistent when one annotator races two transitions', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const q = await newQueue(caller)
    await addCalls(caller, q, await newCalls(caller, 1))
    const [i1] = (await items(caller, q)).map((i: { id: string }) => i.id)
    await progress(caller, q, i1, 'in_progress')

    // Act
    const results = await Promise.all(
      ['completed', 'skipped', 'completed', 'skipped'].map((s) => progress(caller, q, i1, s)),
    )
    const [final] = await items(caller, q)

    // Assess: one target state won; requests for it succeed, the other state's requests are refused.
    const winner = final.annotation_state
    expect(['completed', 'skipped']).toContain(winner)
    for (const [i, s] of ['completed', 'skipped', 'completed', 'skipped'].entries()) {
      expect(results[i]?.status).toBe(s === winner ? 200 : 400)
    }
  })

  it('filters by state, sorts, and numbers positions before the state filter', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const q = await newQueue(caller)
    await addCalls(caller, q, await newCalls(caller, 3))
    const ids = (await items(caller, q)).map((i: { id: string }) => i.id)
    await progress(caller, q, ids[1], 'completed')

    // Act
    const done = await items(caller, q, { include_position: true, filter: { annotation_states: ['completed'] } })
    const open = await items(caller, q, {
      include_position: true,
      filter: { annotation_states: ['unstarted'] },
      limit: 1,
      offset: 1,
    })
    const desc = await items(caller, q, { sort_by: [{ field: 'call_started_at', direction: 'desc' }] })

    // Assess
    expect(done.map((i: { id: string; position_in_queue: number }) => [i.id, i.position_in_queue])).toEqual([
      [ids[1], 2],
    ])
    expect(open.map((i: { id: string; position_in_queue: number }) => [i.id, i.position_in_queue])).toEqual([
      [ids[2], 3],
    ])
    expect(desc.map((i: { id: string }) => i.id)).toEqual([...ids].reverse())
  })

  it('reports stats per requested queue in order, repeats and unknown ids included', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const q1 = await newQueue(caller)
    const q2 = await newQueue(caller)
    await addCalls(caller, q1, await newCalls(caller, 3))
    await addCalls(caller, q2, await newCalls(caller, 5))
    const i1 = (await items(caller, q1)).map((i: { id: string }) => i.id)
    const i2 = (await items(caller, q2)).map((i: { id: string }) => i.id)
    for (const id of i1.slice(0, 2)) await progress(caller, q1, id, 'completed')
    for (const id of i2.slice(0, 2)) await progress(caller, q2, id, 'completed')
    for (const id of i2.slice(2, 4)) await progress(caller, q2, id, 'skipped')

    // Act
    const res = await send(
      statsApp,
      '/annotation_queues/stats',
      { project_id: caller.project, queue_ids: [q2, 'unknown', q1, q2] },
      caller,
    )
    const empty = await send(
      statsApp,
      '/annotation_queues/stats',
      { project_id: caller.project, queue_ids: [] },
      caller,
    )

    // Assess
    expect(res.body.stats).toEqual([
      { queue_id: q2, total_items: 5, completed_items: 4 },
      { queue_id: 'unknown', total_items: 0, completed_items: 0 },
      { queue_id: q1, total_items: 3, completed_items: 2 },
      { queue_id: q2, total_items: 5, completed_items: 4 },
    ])
    expect(empty.body).toEqual({ stats: [] })
  })

  it('answers 422 for bad bodies and 403 on a foreign project', async () => {
    const a = await newProjectCaller()
    const b = await newProjectCaller()
    const q = await newQueue(b)
    const noFields = await send(
      itemsApp,
      `/annotation_queues/${q}/items/query`,
      { project_id: a.project, filter: { annotation_states: ['done'] } },
      a,
    )
    const noState = await send(progressApp, `/annotation_queues/${q}/items/x/progress`, { project_id: a.project }, a)
    const foreign = await send(
      progressApp,
      `/annotation_queues/${q}/items/x/progress`,
      { project_id: b.project, annotation_state: 'completed' },
      a,
    )
    const foreignItems = await send(itemsApp, `/annotation_queues/${q}/items/query`, { project_id: b.project }, a)
    expect(noFields.status).toBe(422)
    expect(noState.status).toBe(422)
    expect(foreign.status).toBe(403)
    expect(foreignItems.status).toBe(403)
  })
})
