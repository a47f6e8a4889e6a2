import { describe, expect, it } from 'vitest'
import { handler as createHandler } from '#functions/training/create-preview-model/handler'
import { handler as deleteCheckpointsHandler } from '#functions/training/delete-checkpoints/handler'
import { handler as deleteHandler } from '#functions/training/delete-preview-model/handler'
import { handler as metricsHandler } from '#functions/training/get-model-metrics/handler'
import { handler as checkpointsHandler } from '#functions/training/list-checkpoints/handler'
import { handler as listHandler } from '#functions/training/list-preview-models/handler'
import { handler as logHandler } from '#functions/training/log-trajectories/handler'
import { principalToAuthorizerContext } from '#shared/http/authorizer-context'
import { newCaller, type TestCaller } from '../../support/auth.js'
import { lambdaContext, type RestEventOptions, restEvent } from '../../support/events.js'
import { invokeLambda } from '../../support/lambda-invoke.js'
import { trajectory } from '../../support/training.js'

type Buffered = (event: ReturnType<typeof restEvent>, context: ReturnType<typeof lambdaContext>) => Promise<unknown>
type Result = { statusCode: number; body: string }

// Behind API Gateway the REQUEST authorizer has resolved the key and passes the principal in the context.
function eventFor(caller: TestCaller, options: RestEventOptions) {
  return restEvent({
    ...options,
    headers: { ...caller.bearer, 'content-type': 'application/json', ...options.headers },
    authorizer: principalToAuthorizerContext({
      userId: caller.userId,
      keyId: caller.keyId,
      entity: caller.entity,
      entities: [caller.entity],
    }),
  })
}

async function invoke(handler: Buffered, caller: TestCaller, options: RestEventOptions) {
  const result = (await handler(eventFor(caller, options), lambdaContext())) as Result
  return { status: result.statusCode, json: JSON.parse(result.body) as Record<string, unknown> }
}

describe('training Lambda handlers', () => {
  it('create, list, log, read metrics and checkpoints and delete a preview model through each function handler', async () => {
    // Prepare
    const caller = await newCaller()
    const body = { entity: caller.entity, project: 'rl', name: 'agent', base_model: 'Qwen/Qwen2.5-7B-Instruct' }

    // Act
    const created = await invoke(createHandler as Buffered, caller, {
      method: 'POST',
      path: '/v1/preview/models',
      body: JSON.stringify(body),
    })
    const id = String(created.json.id)
    const listed = await invoke(listHandler as Buffered, caller, { path: '/v1/preview/models' })
    const logged = await invoke(logHandler as Buffered, caller, {
      method: 'POST',
      path: `/v1/preview/models/${id}/log`,
      body: JSON.stringify({ split: 'val', trajectory_groups: [{ trajectories: [trajectory(1), trajectory(0)] }] }),
    })
    // The metrics read streams its answer (its manifest entry is `stream: true`).
    const metrics = await invokeLambda(
      metricsHandler,
      eventFor(caller, { path: `/v1/preview/models/${id}/metrics`, query: { split: 'val' } }),
    )
    const checkpoints = await invoke(checkpointsHandler as Buffered, caller, {
      path: `/v1/preview/models/${id}/checkpoints`,
      query: { limit: '1', order: 'desc' },
    })
    const deletedCheckpoints = await invoke(deleteCheckpointsHandler as Buffered, caller, {
      method: 'DELETE',
      path: `/v1/preview/models/${id}/checkpoints`,
      body: JSON.stringify({ steps: [1] }),
    })
    const deleted = await invoke(deleteHandler as Buffered, caller, {
      method: 'DELETE',
      path: `/v1/preview/models/${id}`,
    })

    // Assess
    expect(created).toMatchObject({ status: 200, json: { entity: caller.entity, project: 'rl', name: 'agent' } })
    expect(listed.status).toBe(200)
    expect(JSON.stringify(listed.json)).toContain(id)
    expect(logged).toMatchObject({ status: 200, json: { model_id: id, split: 'val' } })
    expect((logged.json.metrics as Record<string, number>)['val/reward']).toBe(0.5)
    expect(metrics).toMatchObject({ streamed: true, statusCode: 200 })
    expect(metrics.body).toContain('val/reward')
    expect(checkpoints).toEqual({ status: 200, json: { data: [], has_more: false } })
    expect(deletedCheckpoints).toEqual({ status: 200, json: { deleted_count: 0, not_found_steps: [1] } })
    expect(deleted.status).toBe(200)
  })
})
