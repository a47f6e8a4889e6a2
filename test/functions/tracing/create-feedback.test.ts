import { randomUUID } from 'node:crypto'
import { GetCommand } from '@aws-sdk/lib-dynamodb'
import { describe, expect, it } from 'vitest'
import { app } from '#functions/tracing/create-feedback/handler'
import { app as batchApp } from '#functions/tracing/create-feedback-batch/handler'
import { app as queryApp } from '#functions/tracing/query-feedback/handler'
import { db, table } from '#shared/db/client'
import { startPart, writeCalls } from '../../support/calls.js'
import { publish } from '../../support/objects.js'
import { newProjectCaller, type ProjectCaller, send } from '../../support/tracing.js'

const base = (c: ProjectCaller, extra: Record<string, unknown> = {}) => ({
  project_id: c.project,
  weave_ref: `weave:///${c.project}/call/c1`,
  feedback_type: 'custom',
  payload: { score: 1 },
  ...extra,
})

async function count(c: ProjectCaller): Promise<number> {
  return (await send(queryApp, '/feedback/query', { project_id: c.project }, c)).body.total_count
}

describe('POST /feedback/create', () => {
  it('stores the row for the authenticated user, ignoring a wb_user_id in the body', async () => {
    // Prepare
    const caller = await newProjectCaller()

    // Act
    const res = await send(app, '/feedback/create', base(caller, { wb_user_id: 'someone-else' }), caller)
    const rows = await send(queryApp, '/feedback/query', { project_id: caller.project }, caller)

    // Assess
    expect(res.status).toBe(200)
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      created_at: expect.stringMatching(/Z$/),
      wb_user_id: caller.userId,
      payload: { score: 1 },
    })
    expect(rows.body.total_count).toBe(1)
    expect(rows.body.result[0]).toMatchObject({
      id: res.body.id,
      project_id: caller.project,
      weave_ref: `weave:///${caller.project}/call/c1`,
      wb_user_id: caller.userId,
      creator: null,
      feedback_type: 'custom',
      payload: { score: 1 },
      annotation_ref: null,
      queue_id: null,
      scorer_tags: [],
      span_status_code: 'UNSET',
    })
  })

  it('records whether its call is live beside the row, never in an answer', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const callId = randomUUID()
    await writeCalls(caller, [{ start: startPart(caller.project, { id: callId }) }])
    const onCall = base(caller, { weave_ref: `weave:///${caller.project}/call/${callId}` })
    const stored = async (id: string) =>
      (
        await db().send(
          new GetCommand({
            TableName: table(),
            Key: { PK: `FB#${caller.project}#${id}`, SK: 'FB' },
            ConsistentRead: true,
          }),
        )
      ).Item

    // Act
    const live = await send(app, '/feedback/create', onCall, caller)
    const absent = await send(app, '/feedback/create', base(caller), caller)
    const batch = await send(batchApp, '/feedback/batch/create', { batch: [onCall] }, caller)
    const rows = await send(queryApp, '/feedback/query', { project_id: caller.project }, caller)

    // Assess
    expect(Object.keys(live.body).sort()).toEqual(['created_at', 'id', 'payload', 'wb_user_id'])
    expect(Object.keys(absent.body).sort()).toEqual(Object.keys(live.body).sort())
    expect(Object.keys(batch.body.res[0]).sort()).toEqual(Object.keys(live.body).sort())
    expect(rows.body.result).toHaveLength(3)
    for (const row of rows.body.result) expect(Object.keys(row).sort()).toEqual(Object.keys(rows.body.result[0]).sort())
    expect(JSON.stringify(rows.body)).not.toContain('call_live')
    expect((await stored(live.body.id))?.call_live).toBe(true)
    expect((await stored(batch.body.res[0].id))?.call_live).toBe(true)
    expect((await stored(absent.body.id))?.call_live).toBeUndefined()
  })

  it('never duplicates a retried create, by client id or by X-Weave-Retry-Id', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const withId = base(caller, { id: 'client-id-1' })
    const retried = { ...caller, basic: { ...caller.basic, 'x-weave-retry-id': 'retry-1' } }

    // Act
    const first = await send(app, '/feedback/create', withId, caller)
    const again = await send(app, '/feedback/create', withId, caller)
    const concurrent = await Promise.all([1, 2, 3].map(() => send(app, '/feedback/create', base(caller), retried)))

    // Assess
    expect(again.body).toEqual(first.body)
    expect(first.body.id).toBe('client-id-1')
    expect(new Set(concurrent.map((r) => r.body.id)).size).toBe(1)
    expect(await count(caller)).toBe(2)
  })

  it('enriches reactions and rejects anything but exactly one emoji', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const reaction = (emoji: unknown) =>
      send(app, '/feedback/create', base(caller, { feedback_type: 'wandb.reaction.1', payload: { emoji } }), caller)

    // Act
    const ok = await reaction('👍🏽')
    const two = await reaction('👍👍')
    const text = await reaction('ok')
    const notString = await reaction(5)

    // Assess
    expect(ok.body.payload).toEqual({
      emoji: '👍🏽',
      alias: ':thumbs_up_medium_skin_tone:',
      detoned: '👍',
      detoned_alias: ':thumbs_up:',
    })
    expect(two).toEqual({ status: 400, body: { reason: 'Value of emoji key in payload must be exactly one emoji' } })
    expect(text.status).toBe(400)
    expect(notString.status).toBe(400)
    expect(notString.body.reason).toMatch(/^Invalid payload for feedback_type wandb\.reaction\.1: /)
  })

  it('checks notes for length 1 to 1024 characters, counted as code points as pydantic counts them', async () => {
    const caller = await newProjectCaller()
    const note = (n: unknown) =>
      send(app, '/feedback/create', base(caller, { feedback_type: 'wandb.note.1', payload: { note: n } }), caller)
    const results = await Promise.all([
      note('x'),
      note('x'.repeat(1024)),
      note(''),
      note('x'.repeat(1025)),
      // 1,024 emoji are 2,048 UTF-16 units but 1,024 characters.
      note('🌍'.repeat(1024)),
      note('🌍'.repeat(1025)),
    ])
    expect(results.map((r) => r.status)).toEqual([200, 200, 400, 400, 200, 400])
  })

  it('enforces which refs each feedback type may carry', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const p = caller.project
    const create = (extra: Record<string, unknown>) => send(app, '/feedback/create', base(caller, extra), caller)

    // Act
    const runnableOnPlain = await create({ runnable_ref: `weave:///${p}/op/scorer:abc` })
    const triggerOnPlain = await create({ trigger_ref: `weave:///${p}/object/mon:abc` })
    const annotationOnPlain = await create({ annotation_ref: `weave:///${p}/object/spec:abc` })
    const scorerOnPlain = await create({ scorer_tags: ['x'] })
    const runnable = await create({
      feedback_type: 'wandb.runnable.scorer',
      payload: { output: { score: 1 } },
      runnable_ref: `weave:///${p}/op/scorer:abc`,
      call_ref: `weave:///${p}/call/c2`,
      scorer_tags: ['x'],
    })
    const opWithoutCall = await create({
      feedback_type: 'wandb.runnable.scorer',
      payload: { output: 1 },
      runnable_ref: `weave:///${p}/op/scorer:abc`,
    })
    const badRef = await create({
      feedback_type: 'wandb.runnable.scorer',
      payload: { output: 1 },
      runnable_ref: 'nope',
    })

    // Assess
    expect(runnableOnPlain).toEqual({
      status: 400,
      body: { reason: 'runnable_ref is not allowed for non-runnable feedback' },
    })
    expect(triggerOnPlain).toEqual({
      status: 400,
      body: { reason: 'trigger_ref is not allowed for non-runnable feedback' },
    })
    expect(annotationOnPlain.status).toBe(400)
    expect(scorerOnPlain.status).toBe(400)
    expect(runnable.status).toBe(200)
    expect(opWithoutCall.status).toBe(400)
    expect(badRef.status).toBe(400)
  })

  it('checks annotation feedback against its AnnotationSpec', async () => {
    // Prepare
    const caller = await newProjectCaller()
    const spec = { name: 'rating', field_schema: { type: 'integer', minimum: 1, maximum: 5 } }
    const digest = await publish(caller, 'rating', {
      ...spec,
      _type: 'AnnotationSpec',
      _class_name: 'AnnotationSpec',
      _bases: ['BaseObject', 'BaseModel'],
    })
    const ref = `weave:///${caller.project}/object/rating:${digest}`
    const annotate = (value: unknown, annotationRef = ref) =>
      send(
        app,
        '/feedback/create',
        base(caller, { feedback_type: 'wandb.annotation.rating', annotation_ref: annotationRef, payload: { value } }),
        caller,
      )

    const textRef = `weave:///${caller.project}/object/short:${await publish(caller, 'short', {
      name: 'short',
      field_schema: { type: 'string', minLength: 2, maxLength: 3 },
      _type: 'AnnotationSpec',
      _class_name: 'AnnotationSpec',
      _bases: ['BaseObject', 'BaseModel'],
    })}`
    const annotateText = (value: string) =>
      send(
        app,
        '/feedback/create',
        base(caller, { feedback_type: 'wandb.annotation.short', annotation_ref: textRef, payload: { value } }),
        caller,
      )

    // Act
    const ok = await annotate(4)
    const outOfRange = await annotate(9)
    // String bounds count characters (code points), as the `jsonschema` package Weave validates with does.
    const texts = await Promise.all(['🌍🌍', '🌍🌍🌍', '🌍', '🌍🌍🌍🌍'].map(annotateText))
    const missingSpec = await annotate(4, `weave:///${caller.project}/object/rating:${'A'.repeat(43)}`)

    // Assess
    expect(ok.status).toBe(200)
    expect(outOfRange).toEqual({ status: 400, body: { reason: 'Feedback payload does not match annotation spec' } })
    expect(texts.map((r) => r.status)).toEqual([200, 200, 400, 400])
    expect(missingSpec).toEqual({
      status: 400,
      body: { reason: `Annotation ref weave:///${caller.project}/object/rating:${'A'.repeat(43)} not found` },
    })
  })

  it('rejects a queue_id that names no live queue and a payload above the size limit', async () => {
    const caller = await newProjectCaller()
    const queue = await send(app, '/feedback/create', base(caller, { queue_id: 'nope' }), caller)
    const big = await send(app, '/feedback/create', base(caller, { payload: { s: 'x'.repeat(1 << 20) } }), caller)
    expect(queue).toEqual({ status: 400, body: { reason: 'Queue nope not found or has been deleted' } })
    expect(big).toEqual({ status: 400, body: { reason: 'Feedback payload too large' } })
  })

  it('stores a payload larger than the DynamoDB item limit whole', async () => {
    const caller = await newProjectCaller()
    const payload = { text: 'é'.repeat(300_000) }
    const res = await send(app, '/feedback/create', base(caller, { payload }), caller)
    const rows = await send(queryApp, '/feedback/query', { project_id: caller.project }, caller)
    expect(res.status).toBe(200)
    expect(rows.body.result[0].payload).toEqual(payload)
  })

  it('answers 422 for a missing payload or feedback_type and 403 for a foreign project', async () => {
    const a = await newProjectCaller()
    const b = await newProjectCaller()
    const noPayload = await send(
      app,
      '/feedback/create',
      { project_id: a.project, weave_ref: 'x', feedback_type: 't' },
      a,
    )
    const noType = await send(app, '/feedback/create', { project_id: a.project, weave_ref: 'x', payload: {} }, a)
    const foreign = await send(app, '/feedback/create', base(b), a)
    expect(noPayload.status).toBe(422)
    expect(noPayload.body.detail[0].loc).toEqual(['body', 'payload'])
    expect(noType.status).toBe(422)
    expect(foreign.status).toBe(403)
    expect(await count(b)).toBe(0)
  })
})

describe('POST /feedback/batch/create', () => {
  it('creates each item and answers in order', async () => {
    const caller = await newProjectCaller()
    const res = await send(
      batchApp,
      '/feedback/batch/create',
      { batch: [base(caller, { id: 'a' }), base(caller, { id: 'b' })] },
      caller,
    )
    expect(res.status).toBe(200)
    expect(res.body.res.map((r: { id: string }) => r.id)).toEqual(['a', 'b'])
    expect(await count(caller)).toBe(2)
  })

  it('writes nothing when a later item is invalid', async () => {
    const caller = await newProjectCaller()
    const bad = base(caller, { feedback_type: 'wandb.note.1', payload: { note: '' } })
    const res = await send(batchApp, '/feedback/batch/create', { batch: [base(caller), bad] }, caller)
    expect(res.status).toBe(400)
    expect(await count(caller)).toBe(0)
  })

  it('writes nothing when one item names a foreign project', async () => {
    const a = await newProjectCaller()
    const b = await newProjectCaller()
    const res = await send(batchApp, '/feedback/batch/create', { batch: [base(a), base(b)] }, a)
    expect(res.status).toBe(403)
    expect(await count(a)).toBe(0)
  })
})
