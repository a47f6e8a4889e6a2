import { describe, expect, it } from 'vitest'
import { app as createQueueApp } from '#functions/tracing/create-annotation-queue/handler'
import { app as createFeedbackApp } from '#functions/tracing/create-feedback/handler'
import { app as batchFeedbackApp } from '#functions/tracing/create-feedback-batch/handler'
import { app as queryQueuesApp } from '#functions/tracing/query-annotation-queues/handler'
import { app as queryFeedbackApp } from '#functions/tracing/query-feedback/handler'
import { app as updateQueueApp } from '#functions/tracing/update-annotation-queue/handler'
import { newQueue } from '../../support/queues.js'
import { newProjectCaller, type ProjectCaller, send } from '../../support/tracing.js'

// QA (tenant isolation): writes stored refs into another entity as strings. They were never followed across projects,
// but Weave's adapter converts every ref of a request to its internal project, which needs access to it, and refuses
// them; Loom now answers them the 403 a read of the ref gets.

const feedback = (caller: ProjectCaller, weaveRef: string) => ({
  project_id: caller.project,
  weave_ref: weaveRef,
  feedback_type: 'custom',
  payload: { note: 'n' },
})

async function feedbackCount(caller: ProjectCaller): Promise<number> {
  const res = await send(queryFeedbackApp, '/feedback/query', { project_id: caller.project }, caller)
  return (res.body.result as unknown[]).length
}

describe('refs into another entity in writes', () => {
  it('are refused in feedback (alone or in a batch) with 403, nothing written; refs into the own entity are kept', async () => {
    // Prepare
    const bob = await newProjectCaller()
    const alice = await newProjectCaller()
    const foreign = `weave:///${alice.project}/call/0190f5a1-0000-7000-8000-000000000000`
    const ownOtherProject = `weave:///${bob.entity}/other/call/0190f5a1-0000-7000-8000-000000000000`

    // Act
    const refused = await send(createFeedbackApp, '/feedback/create', feedback(bob, foreign), bob)
    const refusedRunnable = await send(
      createFeedbackApp,
      '/feedback/create',
      { ...feedback(bob, ownOtherProject), runnable_ref: `weave:///${alice.project}/op/scorer:abc` },
      bob,
    )
    const refusedBatch = await send(
      batchFeedbackApp,
      '/feedback/batch/create',
      { batch: [feedback(bob, ownOtherProject), feedback(bob, foreign)] },
      bob,
    )
    const kept = await send(createFeedbackApp, '/feedback/create', feedback(bob, ownOtherProject), bob)

    // Assess
    for (const res of [refused, refusedRunnable, refusedBatch]) {
      expect(res.status).toBe(403)
      expect(res.body).toEqual({ reason: `You do not have access to entity '${alice.entity}'` })
    }
    expect(kept.status).toBe(200)
    expect(await feedbackCount(bob)).toBe(1)
    expect(await feedbackCount(alice)).toBe(0)
  })

  it('are refused in an annotation queue scorer_refs on create and update with 403', async () => {
    // Prepare
    const bob = await newProjectCaller()
    const alice = await newProjectCaller()
    const foreign = `weave:///${alice.project}/object/scorer:abc`
    const queue = await newQueue(bob)

    // Act
    const created = await send(
      createQueueApp,
      '/annotation_queues',
      { project_id: bob.project, name: 'q', scorer_refs: [foreign] },
      bob,
    )
    const updated = await send(
      updateQueueApp,
      `/annotation_queues/${queue}`,
      { project_id: bob.project, scorer_refs: [`weave:///${bob.project}/object/s:1`, foreign] },
      bob,
      'PUT',
    )
    const listed = await send(queryQueuesApp, '/annotation_queues/query', { project_id: bob.project }, bob)

    // Assess
    expect(created.status).toBe(403)
    expect(updated.status).toBe(403)
    expect(JSON.stringify(listed.body)).not.toContain(alice.entity)
  })
})
