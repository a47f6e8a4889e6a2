import { describe, expect, it } from 'vitest'
import { FUNCTIONS } from '#functions/manifest'
import { app as createApp } from '#functions/training/create-preview-model/handler'
import { app as deleteApp } from '#functions/training/delete-checkpoints/handler'
import { app as metricsApp } from '#functions/training/get-model-metrics/handler'
import { app as listApp } from '#functions/training/list-checkpoints/handler'
import { app as logApp } from '#functions/training/log-trajectories/handler'
import { createLocalApp } from '../../../scripts/local/app.js'
import { jsonInit, newCaller, type TestCaller } from '../../support/auth.js'
import { newModel, trajectory } from '../../support/training.js'

type Json = Record<string, unknown> & { data?: { step: number }[]; detail?: unknown }

// ART's serverless client (openai's AsyncCursorPage) reads `data` and `has_more`; `model.get_step()` asks for
// `?limit=1&order=desc` and takes the first checkpoint's step, 0 when there is none. `delete_checkpoints()` lists every
// checkpoint and deletes by step. Loom does not train, so it holds no checkpoint (docs/training.md §6).

async function listCheckpoints(
  caller: TestCaller,
  modelId: string,
  query = '',
): Promise<{ status: number; json: Json }> {
  const res = await listApp.request(`/v1/preview/models/${modelId}/checkpoints${query}`, { headers: caller.bearer })
  return { status: res.status, json: (await res.json()) as Json }
}

async function deleteCheckpoints(
  caller: TestCaller,
  modelId: string,
  body: unknown,
): Promise<{ status: number; json: Json }> {
  const res = await deleteApp.request(
    `/v1/preview/models/${modelId}/checkpoints`,
    jsonInit(body, caller.bearer, 'DELETE'),
  )
  return { status: res.status, json: (await res.json()) as Json }
}

/** `model.get_step()` of ART's ServerlessBackend: the first listed checkpoint's step, else 0. */
function stepOf(page: Json): number {
  return page.data?.[0]?.step ?? 0
}

describe('ART’s checkpoint calls, in the order a training example makes them', () => {
  it('registers, reads step 0 from an empty page, logs at that step and deletes nothing', async () => {
    // Prepare
    const caller = await newCaller()
    const spec = { entity: caller.entity, project: 'rl', name: 'agent-001', base_model: 'Qwen/Qwen2.5-7B-Instruct' }
    const registered = await createApp.request(
      '/v1/preview/models',
      jsonInit({ ...spec, return_existing: true }, caller.bearer),
    )
    const model = (await registered.json()) as { id: string }

    // Act
    const first = await listCheckpoints(caller, model.id, '?limit=1&order=desc')
    const logged = await logApp.request(
      `/v1/preview/models/${model.id}/log`,
      jsonInit(
        { model_id: model.id, split: 'train', trajectory_groups: [{ trajectories: [trajectory(1)] }] },
        caller.bearer,
      ),
    )
    const again = await createApp.request(
      '/v1/preview/models',
      jsonInit({ ...spec, return_existing: true }, caller.bearer),
    )
    const all = await listCheckpoints(caller, model.id)
    const deleted = await deleteCheckpoints(caller, model.id, { steps: [0, 3] })

    // Assess
    expect(registered.status).toBe(200)
    expect(first).toEqual({ status: 200, json: { data: [], has_more: false } })
    expect(stepOf(first.json)).toBe(0)
    expect(logged.status).toBe(200)
    expect(((await logged.json()) as { step: number }).step).toBe(stepOf(first.json))
    expect(((await again.json()) as { id: string }).id).toBe(model.id)
    expect(all).toEqual({ status: 200, json: { data: [], has_more: false } })
    expect(deleted).toEqual({ status: 200, json: { deleted_count: 0, not_found_steps: [0, 3] } })
  })

  it('answers a page for any cursor and order, and an empty steps list with nothing deleted', async () => {
    // Prepare
    const caller = await newCaller()
    const model = await newModel(caller)

    // Act
    const paged = await listCheckpoints(caller, model.id, '?after=ckpt-1&limit=100&order=asc')
    const none = await deleteCheckpoints(caller, model.id, { steps: [] })

    // Assess
    expect(paged).toEqual({ status: 200, json: { data: [], has_more: false } })
    expect(none).toEqual({ status: 200, json: { deleted_count: 0, not_found_steps: [] } })
  })
})

describe('the training routes `npm start` serves', () => {
  it('serves both checkpoint routes from the manifest, and training jobs as any unknown route: 404', async () => {
    // Prepare
    const caller = await newCaller()
    const model = await newModel(caller)
    const local = await createLocalApp(FUNCTIONS.filter((f) => f.family === 'training'))
    const send = (method: string, path: string, body?: unknown) =>
      local.request(
        path,
        body === undefined ? { method, headers: caller.bearer } : jsonInit(body, caller.bearer, method),
      )

    // Act
    const listed = await send('GET', `/v1/preview/models/${model.id}/checkpoints?limit=1&order=desc`)
    const deleted = await send('DELETE', `/v1/preview/models/${model.id}/checkpoints`, { steps: [1] })
    const job = await send('POST', '/v1/preview/training-jobs', { model_id: model.id, trajectory_groups: [] })

    // Assess
    expect(listed.status).toBe(200)
    expect(deleted.status).toBe(200)
    expect({ status: job.status, json: await job.json() }).toEqual({
      status: 404,
      json: { detail: 'No route for POST /v1/preview/training-jobs' },
    })
  })
})

describe('checkpoints of a model the caller cannot see', () => {
  it("answers another entity's model and an unknown one with the metrics route's 404", async () => {
    // Prepare
    const owner = await newCaller()
    const stranger = await newCaller()
    const model = await newModel(owner)
    const unknown = '00000000-0000-4000-8000-000000000000'

    // Act
    const metrics = await metricsApp.request(`/v1/preview/models/${model.id}/metrics`, { headers: stranger.bearer })
    const listed = await listCheckpoints(stranger, model.id)
    const deleted = await deleteCheckpoints(stranger, model.id, { steps: [1] })
    const listedUnknown = await listCheckpoints(owner, unknown)
    const deletedUnknown = await deleteCheckpoints(owner, unknown, { steps: [1] })
    const unauthenticated = await listApp.request(`/v1/preview/models/${model.id}/checkpoints`)

    // Assess
    const notFound = { status: 404, json: { detail: `Model '${model.id}' not found` } }
    expect({ status: metrics.status, json: await metrics.json() }).toEqual(notFound)
    expect(listed).toEqual(notFound)
    expect(deleted).toEqual(notFound)
    expect(listedUnknown).toEqual({ status: 404, json: { detail: `Model '${unknown}' not found` } })
    expect(deletedUnknown).toEqual({ status: 404, json: { detail: `Model '${unknown}' not found` } })
    expect(unauthenticated.status).toBe(401)
  })
})

describe('GET /v1/preview/models/{model_id}/checkpoints validation', () => {
  it.each([
    ['?limit=0', 'limit', 'greater_than_equal', 'Input should be greater than or equal to 1'],
    ['?limit=101', 'limit', 'less_than_equal', 'Input should be less than or equal to 100'],
    ['?limit=one', 'limit', 'int_parsing', 'Input should be a valid integer, unable to parse string as an integer'],
    ['?order=newest', 'order', 'literal_error', "Input should be 'asc' or 'desc'"],
  ])('answers %s with a FastAPI 422 naming the parameter', async (query, field, type, msg) => {
    // Prepare
    const caller = await newCaller()
    const model = await newModel(caller)

    // Act
    const { status, json } = await listCheckpoints(caller, model.id, query)

    // Assess
    expect(status).toBe(422)
    expect(json.detail).toEqual([expect.objectContaining({ loc: ['query', field], type, msg })])
  })
})

describe('DELETE /v1/preview/models/{model_id}/checkpoints validation', () => {
  it.each([
    [{}, ['body', 'steps'], 'missing'],
    [{ steps: 3 }, ['body', 'steps'], 'list_type'],
    [{ steps: [1, 'two'] }, ['body', 'steps', 1], 'int_parsing'],
    [{ steps: [1.5] }, ['body', 'steps', 0], 'int_from_float'],
    [null, ['body'], 'missing'],
  ])('answers %j with a FastAPI 422 at %j', async (body, loc, type) => {
    // Prepare
    const caller = await newCaller()
    const model = await newModel(caller)

    // Act
    const { status, json } = await deleteCheckpoints(caller, model.id, body)

    // Assess
    expect(status).toBe(422)
    expect(json.detail).toEqual([expect.objectContaining({ loc, type })])
  })
})
