import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { app as createApp } from '#functions/training/create-preview-model/handler'
import { app as deleteApp } from '#functions/training/delete-preview-model/handler'
import { app as listApp } from '#functions/training/list-preview-models/handler'
import { jsonInit, newCaller, type TestCaller } from '../../support/auth.js'
import { type ModelView, newModel } from '../../support/training.js'

type Json = Record<string, unknown> & { data?: ModelView[]; detail?: unknown }

async function create(caller: TestCaller, body: Record<string, unknown>): Promise<{ status: number; json: Json }> {
  const res = await createApp.request('/v1/preview/models', jsonInit(body, caller.bearer))
  return { status: res.status, json: (await res.json()) as Json }
}

async function list(caller: TestCaller, query = ''): Promise<{ status: number; json: Json }> {
  const res = await listApp.request(`/v1/preview/models${query}`, { headers: caller.bearer })
  return { status: res.status, json: (await res.json()) as Json }
}

const spec = (caller: TestCaller, name = `m-${randomUUID().slice(0, 8)}`) => ({
  entity: caller.entity,
  project: 'rl',
  name,
  base_model: 'Qwen/Qwen2.5-14B-Instruct',
})

describe('POST /v1/preview/models', () => {
  it('creates a model and answers ART’s Model shape', async () => {
    // Prepare
    const caller = await newCaller()

    // Act
    const { status, json } = await create(caller, { ...spec(caller, 'agent-001'), return_existing: false })

    // Assess
    expect(status).toBe(200)
    expect(json).toEqual({
      id: expect.any(String),
      entity: caller.entity,
      project: 'rl',
      name: 'agent-001',
      base_model: 'Qwen/Qwen2.5-14B-Instruct',
      run_id: null,
    })
  })

  it('returns the existing model with return_existing, and 409 without it', async () => {
    // Prepare
    const caller = await newCaller()
    const body = spec(caller)
    const first = await create(caller, body)

    // Act
    const again = await create(caller, { ...body, return_existing: true })
    const conflict = await create(caller, body)

    // Assess
    expect(again.status).toBe(200)
    expect(again.json).toEqual(first.json)
    expect(conflict.status).toBe(409)
    expect(conflict.json).toEqual({ detail: `Model '${caller.entity}/rl/${body.name}' already exists` })
  })

  it("uses the key's entity when entity is null", async () => {
    // Prepare
    const caller = await newCaller()

    // Act
    const { status, json } = await create(caller, { ...spec(caller), entity: null })

    // Assess
    expect(status).toBe(200)
    expect(json.entity).toBe(caller.entity)
  })

  it("refuses another entity's namespace with 403", async () => {
    // Prepare
    const caller = await newCaller()
    const other = await newCaller()

    // Act
    const { status, json } = await create(caller, spec(other))

    // Assess
    expect(status).toBe(403)
    expect(json).toEqual({ detail: `You do not have access to entity '${other.entity}'` })
  })

  it('validates the body with 422 locations', async () => {
    // Prepare
    const caller = await newCaller()

    // Act
    const { status, json } = await create(caller, { entity: caller.entity, project: 'rl', name: 'bad name!' })

    // Assess
    expect(status).toBe(422)
    expect((json.detail as { loc: unknown[] }[]).map((d) => d.loc)).toEqual([
      ['body', 'name'],
      ['body', 'base_model'],
    ])
    // pydantic prints the bare pattern, not a JavaScript regex literal with its slashes (QA).
    expect((json.detail as unknown[])[0]).toEqual({
      type: 'string_pattern_mismatch',
      loc: ['body', 'name'],
      msg: "String should match pattern '^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$'",
      input: 'bad name!',
    })
  })
})

describe('GET /v1/preview/models', () => {
  it("lists the caller's models only, filtered by project", async () => {
    // Prepare
    const caller = await newCaller()
    const other = await newCaller()
    const a = await newModel(caller, 'alpha')
    const b = await newModel(caller, 'beta')
    await newModel(other, 'alpha')

    // Act
    const all = await list(caller)
    const alpha = await list(caller, `?entity=${caller.entity}&project=alpha`)
    const foreign = await list(caller, `?entity=${other.entity}`)

    // Assess
    expect(all.status).toBe(200)
    expect(all.json.data?.map((m) => m.id).sort()).toEqual([a.id, b.id].sort())
    expect(alpha.json.data).toEqual([{ ...a, run_id: null }])
    expect(foreign.status).toBe(403)
  })
})

describe('project names', () => {
  it('registers and lists models in projects named as tracing projects may be (spaces, +, non-ASCII)', async () => {
    // Prepare
    const caller = await newCaller()
    const projects = ['my project', 'proj+1', 'über']

    // Act
    const created = await Promise.all(projects.map((project) => create(caller, { ...spec(caller), project })))
    const listed = await Promise.all(
      projects.map((project) => list(caller, `?entity=${caller.entity}&project=${encodeURIComponent(project)}`)),
    )
    const empty = await list(caller, `?entity=${caller.entity}&project=${encodeURIComponent('my other project')}`)

    // Assess
    expect(created.map((c) => [c.status, c.json.project])).toEqual(projects.map((p) => [200, p]))
    expect(listed.map((l) => [l.status, l.json.data?.map((m) => m.id)])).toEqual(created.map((c) => [200, [c.json.id]]))
    expect(empty).toEqual({ status: 200, json: { data: [] } })
  })

  it("refuses a project with '/' or '#' with the family's 422, in the body and in the list filter", async () => {
    // Prepare
    const caller = await newCaller()

    // Act
    const slash = await create(caller, { ...spec(caller), project: 'a/b' })
    const hash = await list(caller, `?entity=${caller.entity}&project=${encodeURIComponent('a#b')}`)

    // Assess
    expect(slash).toEqual({
      status: 422,
      json: {
        detail: [
          {
            type: 'value_error',
            loc: ['body', 'project'],
            msg: "Value error, a project name cannot contain characters: '/'",
            input: 'a/b',
          },
        ],
      },
    })
    expect(hash).toEqual({
      status: 422,
      json: {
        detail: [
          {
            type: 'value_error',
            loc: ['query', 'project'],
            msg: "Value error, a project name cannot contain characters: '#'",
            input: 'a#b',
          },
        ],
      },
    })
  })
})

describe('DELETE /v1/preview/models/{model_id}', () => {
  it('deletes a model, frees its name and answers 404 afterwards', async () => {
    // Prepare
    const caller = await newCaller()
    const model = await newModel(caller)

    // Act
    const res = await deleteApp.request(`/v1/preview/models/${model.id}`, { method: 'DELETE', headers: caller.bearer })
    const again = await deleteApp.request(`/v1/preview/models/${model.id}`, {
      method: 'DELETE',
      headers: caller.bearer,
    })
    const recreated = await create(caller, { ...spec(caller, model.name), project: model.project })

    // Assess
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ id: model.id, deleted: true })
    expect(again.status).toBe(404)
    expect(recreated.status).toBe(200)
    expect(recreated.json.id).not.toBe(model.id)
    expect((await list(caller)).json.data?.map((m) => m.id)).toEqual([recreated.json.id])
  })

  it("answers 404 for another entity's model and leaves it in place", async () => {
    // Prepare
    const owner = await newCaller()
    const stranger = await newCaller()
    const model = await newModel(owner)

    // Act
    const res = await deleteApp.request(`/v1/preview/models/${model.id}`, {
      method: 'DELETE',
      headers: stranger.bearer,
    })

    // Assess
    expect(res.status).toBe(404)
    expect((await list(owner)).json.data?.map((m) => m.id)).toEqual([model.id])
  })
})
