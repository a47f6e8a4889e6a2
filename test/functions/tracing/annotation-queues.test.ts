import { describe, expect, it } from 'vitest'
import { app as createApp } from '#functions/tracing/create-annotation-queue/handler'
import { app as createFeedbackApp } from '#functions/tracing/create-feedback/handler'
import { app as deleteApp } from '#functions/tracing/delete-annotation-queue/handler'
import { app as queryApp } from '#functions/tracing/query-annotation-queues/handler'
import { app as readApp } from '#functions/tracing/read-annotation-queue/handler'
import { app as updateApp } from '#functions/tracing/update-annotation-queue/handler'
import { jsonInit } from '../../support/auth.js'
import { newQueue } from '../../support/queues.js'
import { get, newProjectCaller, type ProjectCaller, send } from '../../support/tracing.js'

async function queryQueues(caller: ProjectCaller, body: Record<string, unknown> = {}) {
  const res = await queryApp.request(
    '/annotation_queues/query',
    jsonInit({ project_id: caller.project, ...body }, caller.basic),
  )
  const text = await res.text()
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    rows: text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l)),
  }
}

describe('annotation queues', () => {
  it('creates a queue owned by the caller and reads it back', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const scorer = `weave:///${caller.project}/object/s:1`

    // Act
    const created = await send(
      createApp,
      '/annotation_queues',
      { project_id: caller.project, name: 'Review', scorer_refs: [scorer], wb_user_id: 'x' },
      caller,
    )
    const read = await get(
      readApp,
      `/annotation_queues/${created.body.id}?project_id=${encodeURIComponent(caller.project)}`,
      caller,
    )

    // Assess
    expect(created.body.id).toMatch(/^[0-9a-f-]{36}$/)
    expect(read.body.queue).toEqual({
      id: created.body.id,
      project_id: caller.project,
      name: 'Review',
      description: '',
      scorer_refs: [scorer],
      created_at: expect.any(String),
      created_by: caller.userId,
      updated_at: read.body.queue.created_at,
      deleted_at: null,
    })
  })

  it('answers 422 without scorer_refs', async () => {
    const caller = await newProjectCaller()
    const res = await send(createApp, '/annotation_queues', { project_id: caller.project, name: 'q' }, caller)
    expect(res.status).toBe(422)
    expect(res.body.detail[0].loc).toEqual(['body', 'scorer_refs'])
  })

  it('queries live queues as JSON Lines, by name with wildcards, sorted and paged', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const a = await newQueue(caller, 'Alpha review')
    const b = await newQueue(caller, 'beta')
    const c = await newQueue(caller, 'Gamma_review')
    const gone = await newQueue(caller, 'deleted review')
    await deleteApp.request(`/annotation_queues/${gone}?project_id=${encodeURIComponent(caller.project)}`, {
      method: 'DELETE',
      headers: caller.basic,
    })

    // Act
    const all = await queryQueues(caller)
    const named = await queryQueues(caller, { name: 'REVIEW' })
    const wildcard = await queryQueues(caller, { name: 'a_r' })
    const byName = await queryQueues(caller, { sort_by: [{ field: 'name', direction: 'asc' }], limit: 2, offset: 1 })

    // Assess
    expect(all.status).toBe(200)
    expect(all.type).toContain('application/jsonl')
    expect(all.rows.map((q) => q.id)).toEqual([c, b, a])
    expect(named.rows.map((q) => q.id)).toEqual([c, a])
    expect(wildcard.rows.map((q) => q.id)).toEqual([c, a])
    expect(byName.rows.map((q) => q.name)).toEqual(['Gamma_review', 'beta'])
  })

  it('filters by a name pattern that would make a backtracking match run for hours, at once', async () => {
    // Prepare: a long run of one letter, and `%a` five times then `%b` (a single regular expression took 35 s, the
    // server blocked meanwhile)
    const caller = await newProjectCaller()
    const run = await newQueue(caller, 'a'.repeat(80))

    // Act
    const none = await queryQueues(caller, { name: `${'%a'.repeat(5)}%b` })
    const found = await queryQueues(caller, { name: `${'%a'.repeat(5)}%` })

    // Assess
    expect(none.rows).toEqual([])
    expect(found.rows.map((q) => q.id)).toEqual([run])
  })

  it('updates only the given fields and answers unchanged when none are given', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const id = await newQueue(caller, 'old')

    // Act
    const same = await send(updateApp, `/annotation_queues/${id}`, { project_id: caller.project }, caller, 'PUT')
    const changed = await send(
      updateApp,
      `/annotation_queues/${id}`,
      { project_id: caller.project, description: 'new text' },
      caller,
      'PUT',
    )

    // Assess
    expect(same.body.queue).toMatchObject({ name: 'old', description: '' })
    expect(changed.body.queue).toMatchObject({ name: 'old', description: 'new text', deleted_at: null })
    expect(changed.body.queue.updated_at >= changed.body.queue.created_at).toBe(true)
  })

  it('answers 413 for an update that takes the queue past 400 KB in UTF-8 bytes, keeping the stored fields', async () => {
    // Prepare: a description of 240 KB in 3-byte characters (80,000 characters, which dynalite counts instead).
    const caller = await newProjectCaller()
    const id = await newQueue(caller, 'kept')
    const description = '€'.repeat(80_000)
    const first = await send(
      updateApp,
      `/annotation_queues/${id}`,
      { project_id: caller.project, description },
      caller,
      'PUT',
    )

    // Act: a name of 180 KB fits alone but not beside the description (as DynamoDB counts bytes).
    const res = await send(
      updateApp,
      `/annotation_queues/${id}`,
      { project_id: caller.project, name: '€'.repeat(60_000) },
      caller,
      'PUT',
    )
    const read = await get(readApp, `/annotation_queues/${id}?project_id=${encodeURIComponent(caller.project)}`, caller)

    // Assess
    expect(first.status).toBe(200)
    expect(res).toEqual({ status: 413, body: { reason: 'Request too large' } })
    expect(read.body.queue.name).toBe('kept')
    expect(read.body.queue.description).toBe(description)
  })

  it('soft-deletes a queue once; later reads, updates and deletes answer 404', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const id = await newQueue(caller)
    const qs = `project_id=${encodeURIComponent(caller.project)}`
    const del = () => deleteApp.request(`/annotation_queues/${id}?${qs}`, { method: 'DELETE', headers: caller.basic })

    // Act
    const first = await del()
    const firstBody = (await first.json()) as { queue: { deleted_at: string } }
    const second = await del()
    const read = await get(readApp, `/annotation_queues/${id}?${qs}`, caller)
    const update = await send(
      updateApp,
      `/annotation_queues/${id}`,
      { project_id: caller.project, name: 'x' },
      caller,
      'PUT',
    )
    const feedback = await send(
      createFeedbackApp,
      '/feedback/create',
      { project_id: caller.project, weave_ref: 'r', feedback_type: 't', payload: {}, queue_id: id },
      caller,
    )

    // Assess
    expect(first.status).toBe(200)
    expect(firstBody.queue.deleted_at).toEqual(expect.any(String))
    expect(second.status).toBe(404)
    expect(await second.json()).toEqual({ reason: `Queue ${id} not found or already deleted` })
    expect(read).toEqual({ status: 404, body: { reason: `Queue ${id} not found` } })
    expect(update).toEqual({ status: 404, body: { reason: `Queue ${id} not found or already deleted` } })
    expect(feedback).toEqual({ status: 400, body: { reason: `Queue ${id} not found or has been deleted` } })
  })

  it('accepts feedback naming a live queue', async () => {
    const caller = await newProjectCaller()
    const id = await newQueue(caller)
    const res = await send(
      createFeedbackApp,
      '/feedback/create',
      { project_id: caller.project, weave_ref: 'r', feedback_type: 't', payload: {}, queue_id: id },
      caller,
    )
    expect(res.status).toBe(200)
  })

  it('hides queues of another entity (403)', async () => {
    const a = await newProjectCaller()
    const b = await newProjectCaller()
    const id = await newQueue(b)
    const read = await get(readApp, `/annotation_queues/${id}?project_id=${encodeURIComponent(b.project)}`, a)
    const create = await send(createApp, '/annotation_queues', { project_id: b.project, name: 'q', scorer_refs: [] }, a)
    const query = await queryQueues({ ...a, project: b.project })
    expect(read.status).toBe(403)
    expect(create.status).toBe(403)
    expect(query.status).toBe(403)
  })
})
