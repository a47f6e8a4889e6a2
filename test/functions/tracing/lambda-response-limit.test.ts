import { describe, expect, it } from 'vitest'
import { app as addItemsApp } from '#functions/tracing/add-annotation-queue-items/handler'
import { app as createApp } from '#functions/tracing/create-table/handler'
import { handler as queryItems } from '#functions/tracing/query-annotation-queue-items/handler'
import { handler as queryTable } from '#functions/tracing/query-table/handler'
import { handler as readObj } from '#functions/tracing/read-obj/handler'
import { handler as readRefs } from '#functions/tracing/read-refs-batch/handler'
import { app as updateApp } from '#functions/tracing/update-table/handler'
import { LAMBDA_RESPONSE_BYTES } from '#shared/http/lambda-handler'
import { authorizerFor } from '../../support/calls.js'
import { restEvent } from '../../support/events.js'
import { invokeLambda } from '../../support/lambda-invoke.js'
import { publish } from '../../support/objects.js'
import { newCalls, newQueue } from '../../support/queues.js'
import { newProjectCaller, type ProjectCaller, send } from '../../support/tracing.js'

// A POST through a function's Lambda entry behind the REST authorizer, streamed or buffered as its entry is.
function invoke(handler: Parameters<typeof invokeLambda>[0], path: string, body: unknown, caller: ProjectCaller) {
  return invokeLambda(
    handler,
    restEvent({
      method: 'POST',
      path,
      headers: { 'content-type': 'application/json', ...caller.basic },
      body: JSON.stringify(body),
      authorizer: authorizerFor(caller),
    }),
  )
}

describe('answers larger than a buffered Lambda function may return (6 MB)', () => {
  it('arrive whole from table/query, which streams its answer', async () => {
    // Prepare: a table of 8 MB of rows (two requests under the body limit).
    const caller = await newProjectCaller()
    const rows = (from: number) => Array.from({ length: 40 }, (_, i) => ({ i: from + i, text: 'x'.repeat(100_000) }))
    const base = await send(
      createApp,
      '/table/create',
      { table: { project_id: caller.project, rows: rows(0) } },
      caller,
    )
    const grown = await send(
      updateApp,
      '/table/update',
      {
        project_id: caller.project,
        base_digest: base.body.digest,
        updates: rows(40).map((row) => ({ append: { row } })),
      },
      caller,
    )

    // Act
    const whole = await invoke(
      queryTable,
      '/table/query',
      { project_id: caller.project, digest: grown.body.digest },
      caller,
    )

    // Assess
    expect(grown.status).toBe(200)
    expect(whole).toMatchObject({ streamed: true, statusCode: 200 })
    expect(whole.headers['content-type']).toMatch(/^application\/json/)
    expect(whole.bytes.length).toBeGreaterThan(LAMBDA_RESPONSE_BYTES)
    const answer = JSON.parse(whole.body) as { rows: { val: { i: number } }[] }
    expect(answer.rows.map((r) => r.val.i)).toEqual(Array.from({ length: 80 }, (_, i) => i))
  })

  it('arrive whole from refs/read_batch of two 3.5 MB objects, which streams its answer', async () => {
    // Prepare: each object's body fits the 5 MiB request limit of a deployed Loom; their answer together does not.
    const caller = await newProjectCaller()
    const [a, b] = ['a', 'b'].map((c) => c.repeat(3_500_000))
    const refs = [
      `weave:///${caller.project}/object/a:${await publish(caller, 'a', { text: a })}`,
      `weave:///${caller.project}/object/b:${await publish(caller, 'b', { text: b })}`,
    ]

    // Act
    const answer = await invoke(readRefs, '/refs/read_batch', { refs }, caller)

    // Assess
    expect(answer).toMatchObject({ streamed: true, statusCode: 200 })
    expect(answer.bytes.length).toBeGreaterThan(LAMBDA_RESPONSE_BYTES)
    expect((JSON.parse(answer.body) as { vals: unknown[] }).vals).toEqual([{ text: a }, { text: b }])
  })

  it('arrive whole from obj/read of an object that a buffered result would escape past 6 MB', async () => {
    // Prepare: 2.5 MB of quotes, 5 MB as JSON; a buffered function's result escapes the body once more (10 MB).
    const caller = await newProjectCaller()
    const text = '"'.repeat(2_500_000)
    const digest = await publish(caller, 'quotes', { text })

    // Act
    const answer = await invoke(
      readObj,
      '/obj/read',
      { project_id: caller.project, object_id: 'quotes', digest },
      caller,
    )

    // Assess
    expect(answer).toMatchObject({ streamed: true, statusCode: 200 })
    expect(Buffer.byteLength(JSON.stringify({ body: answer.body }))).toBeGreaterThan(LAMBDA_RESPONSE_BYTES)
    expect((JSON.parse(answer.body) as { obj: { digest: string; val: unknown } }).obj).toMatchObject({
      digest,
      val: { text },
    })
  })

  it('are a 413 in the family shape naming the size from a buffered route, where API Gateway would answer a bodiless 502', async () => {
    // Prepare: 20 queue items of 350 KB each (their display fields), 7 MB in all.
    const caller = await newProjectCaller()
    const queueId = await newQueue(caller)
    const callIds = await newCalls(caller, 20)
    const added = await send(
      addItemsApp,
      `/annotation_queues/${queueId}/items`,
      { project_id: caller.project, call_ids: callIds, display_fields: ['z'.repeat(350_000)] },
      caller,
    )
    const path = `/annotation_queues/${queueId}/items/query`

    // Act
    const whole = await invoke(queryItems, path, { project_id: caller.project }, caller)
    const page = await invoke(queryItems, path, { project_id: caller.project, limit: 5 }, caller)

    // Assess
    expect(added.status).toBe(200)
    expect(whole).toMatchObject({ streamed: false, statusCode: 413 })
    expect(whole.headers['content-type']).toBe('application/json')
    const reason = (JSON.parse(whole.body) as { reason: string }).reason
    expect(reason).toMatch(/^The answer \(\d+ bytes\) is larger than the 6291456 bytes a Lambda function may return/)
    expect(Number(/\((\d+) bytes\)/.exec(reason)?.[1])).toBeGreaterThan(LAMBDA_RESPONSE_BYTES)
    expect(page).toMatchObject({ streamed: false, statusCode: 200 })
    expect((JSON.parse(page.body) as { items: unknown[] }).items).toHaveLength(5)
  })
})
