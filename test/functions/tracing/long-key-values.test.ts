import { describe, expect, it } from 'vitest'
import { app as tagApp } from '#functions/tracing/add-obj-tags/handler'
import { app as createFeedbackApp } from '#functions/tracing/create-feedback/handler'
import { app as queueItemsApp } from '#functions/tracing/query-annotation-queue-items/handler'
import { app as queryFeedbackApp } from '#functions/tracing/query-feedback/handler'
import { app as readObjApp } from '#functions/tracing/read-obj/handler'
import { app as progressApp } from '#functions/tracing/update-annotation-queue-item-progress/handler'
import { publish } from '../../support/objects.js'
import { newProjectCaller, send } from '../../support/tracing.js'

// Request values are not length-capped by the contract, while DynamoDB caps key sizes: long values must still work.
describe('values longer than a DynamoDB key allows', () => {
  it('serve objects of a long project name and answer long digests and aliases with 404, never 500', async () => {
    // Prepare
    const base = await newProjectCaller()
    const caller = { ...base, project: `${base.entity}/${'p'.repeat(3000)}` }
    const digest = await publish(caller, 'o', { v: 0 })

    // Act
    const read = await send(
      readObjApp,
      '/obj/read',
      { project_id: caller.project, object_id: 'o', digest: 'latest' },
      caller,
    )
    const longDigest = await send(
      readObjApp,
      '/obj/read',
      { project_id: caller.project, object_id: 'o', digest: 'd'.repeat(5000) },
      caller,
    )
    const longId = await send(
      readObjApp,
      '/obj/read',
      { project_id: caller.project, object_id: 'x'.repeat(5000), digest: 'latest' },
      caller,
    )
    const tag = await send(
      tagApp,
      `/objs/o/versions/${'z'.repeat(3000)}/tags`,
      { project_id: caller.project, tags: ['t'] },
      caller,
      'PUT',
    )

    // Assess
    expect(read.body.obj.digest).toBe(digest)
    expect(longDigest.status).toBe(404)
    expect(longId.status).toBe(404)
    expect(tag.status).toBe(404)
  })

  it('store and find feedback by a long id, type and weave_ref', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const weaveRef = `weave:///${caller.project}/call/${'c'.repeat(4000)}`
    const body = {
      id: 'i'.repeat(3000),
      project_id: caller.project,
      weave_ref: weaveRef,
      feedback_type: 't'.repeat(3000),
      payload: { x: 1 },
    }

    // Act
    const created = await send(createFeedbackApp, '/feedback/create', body, caller)
    const again = await send(createFeedbackApp, '/feedback/create', body, caller)
    const byRef = await send(
      queryFeedbackApp,
      '/feedback/query',
      { project_id: caller.project, query: { $expr: { $eq: [{ $getField: 'weave_ref' }, { $literal: weaveRef }] } } },
      caller,
    )

    // Assess
    expect(created.status).toBe(200)
    expect(again.body).toEqual(created.body)
    expect(byRef.body.total_count).toBe(1)
    expect(byRef.body.result[0].id).toBe(body.id)
  })

  it('answer long queue and item ids with the contract errors', async () => {
    const caller = await newProjectCaller()
    const q = 'q'.repeat(3000)
    const items = await send(
      queueItemsApp,
      `/annotation_queues/${q}/items/query`,
      { project_id: caller.project },
      caller,
    )
    const progress = await send(
      progressApp,
      `/annotation_queues/${q}/items/${'i'.repeat(3000)}/progress`,
      { project_id: caller.project, annotation_state: 'completed' },
      caller,
    )
    expect(items).toEqual({ status: 200, body: { items: [] } })
    expect(progress.status).toBe(400)
  })
})
