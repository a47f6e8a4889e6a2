import { beforeAll, describe, expect, it } from 'vitest'
import * as z from 'zod/mini'
import { FUNCTIONS, type FunctionId } from '#functions/manifest'
import { putModel } from '#shared/db/model-repository'
import { clearCatalogCache } from '#shared/inference/catalog'
import type { FunctionDeclaration } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { newCaller, type TestCaller } from '../support/auth.js'
import {
  buildFixtures,
  callRoute,
  declaredRoute,
  type Fixtures,
  probe,
  probeName,
  projectProbes,
  type RouteProbe,
} from '../support/route-probes.js'
import { trajectory } from '../support/training.js'

let owner: TestCaller
let fixtures: Fixtures
beforeAll(async () => {
  owner = await newCaller()
  fixtures = await buildFixtures(owner)
})

describe("every route's happy-path answer", () => {
  it('matches the response schema its declaration documents, key for key at the top level', async () => {
    // Prepare: a valid request of the data's owner on every route, model routes last (the delete removes the model);
    // a completion of a model the owner may use (the project probes' model is unknown, for the tenancy tests)
    await putModel({ id: EXAMPLE_IDS.model, backend: { kind: 'reference' }, entities: [owner.entity] })
    clearCatalogCache()
    const chat = declaredRoute('inference/create-chat-completion')
    const model = { model_id: fixtures.modelId }
    const probes = [
      probe('meta/get-health'),
      probe('meta/get-server-info'),
      probe('tracing/list-projects'),
      ...projectProbes(fixtures, owner.entity).filter((p) => p.route !== chat),
      probe('inference/create-chat-completion', {
        headers: { 'openai-project': fixtures.project },
        body: { model: EXAMPLE_IDS.model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 4 },
      }),
      probe('training/get-model-metrics', { params: model }),
      probe('training/log-trajectories', {
        params: model,
        body: { trajectory_groups: [{ trajectories: [trajectory(2)] }], split: 'train', step: 2 },
      }),
      probe('training/list-checkpoints', { params: model, query: { limit: '1', order: 'desc' } }),
      probe('training/delete-checkpoints', { params: model, body: { steps: [1] } }),
      probe('training/delete-preview-model', { params: model }),
    ]
    const failures: string[] = []
    const checked = new Set<unknown>()

    // Act
    for (const p of probes) {
      const schema = p.route.response
      if (schema === undefined) continue
      const res = await callRoute(owner, p.probe)
      checked.add(p.route)
      if (res.status !== 200) {
        failures.push(`${probeName(p)} → ${res.status} ${res.text.slice(0, 200)}`)
        continue
      }
      const parsed = z.safeParse(schema, res.json)
      if (!parsed.success) {
        failures.push(`${probeName(p)}: ${JSON.stringify(parsed.error.issues).slice(0, 300)}`)
        continue
      }
      // zod objects drop unknown keys silently: an answer with keys its schema lacks is under-documented.
      const documented = Object.keys(parsed.data as object).sort()
      const answered = Object.keys(res.json as object).sort()
      if (JSON.stringify(answered) !== JSON.stringify(documented)) {
        failures.push(`${probeName(p)}: answered keys ${answered.join(',')}, documented ${documented.join(',')}`)
      }
    }

    // Assess
    expect(failures).toEqual([])
    const withSchema = FUNCTIONS.flatMap((f) => f.routes).filter((r) => r.response !== undefined)
    expect(withSchema.filter((r) => !checked.has(r)).map((r) => `${r.method} ${r.path}`)).toEqual([])
  })
})

describe("every route's alternative answer", () => {
  it('streams events whose data its declaration documents, key for key at the top level', async () => {
    // Prepare: a streamed completion with its usage chunk, of a model the owner may use
    await putModel({ id: EXAMPLE_IDS.model, backend: { kind: 'reference' }, entities: [owner.entity] })
    clearCatalogCache()
    const streamed = FUNCTIONS.flatMap((f) => f.routes).filter((r) => r.alternativeResponse !== undefined)
    const chat = probe('inference/create-chat-completion', {
      body: {
        model: EXAMPLE_IDS.model,
        messages: [{ role: 'user', content: 'hi' }],
        max_tokens: 4,
        stream: true,
        stream_options: { include_usage: true },
      },
    })
    const schema = chat.route.alternativeResponse?.schema
    const failures: string[] = []

    // Act
    const res = await callRoute(owner, chat.probe)
    const events = res.text
      .split('\n\n')
      .filter((event) => event.startsWith('data: ') && event !== 'data: [DONE]')
      .map((event) => JSON.parse(event.slice('data: '.length)) as object)
    for (const event of events) {
      const parsed = schema && z.safeParse(schema, event)
      if (!parsed?.success) failures.push(`${JSON.stringify(event)}: ${JSON.stringify(parsed?.error?.issues)}`)
      else if (
        JSON.stringify(Object.keys(parsed.data as object).sort()) !== JSON.stringify(Object.keys(event).sort())
      ) {
        failures.push(`${JSON.stringify(event)}: schema keeps ${Object.keys(parsed.data as object)}`)
      }
    }

    // Assess
    expect(streamed.map((r) => `${r.method} ${r.path}`)).toEqual(['POST /v1/chat/completions'])
    expect(res.status).toBe(200)
    expect(res.text.endsWith('data: [DONE]\n\n')).toBe(true)
    expect(events.length).toBeGreaterThan(2)
    expect(failures).toEqual([])
  })
})

// A declared example with the caller's project and the fixtures' ids in place of the placeholders (the longest first:
// the project id before the entity and project names it contains).
function withFixtureIds<T>(value: T, f: Fixtures, entity: string, keep: string[] = []): T {
  const ids: [string, string][] = [
    [EXAMPLE_IDS.projectId, f.project],
    [EXAMPLE_IDS.entity, entity],
    [EXAMPLE_IDS.project, f.project.split('/')[1] as string],
    [EXAMPLE_IDS.callId, f.callId],
    [EXAMPLE_IDS.objectId, f.objectId],
    [EXAMPLE_IDS.objectDigest, f.objectDigest],
    [EXAMPLE_IDS.tableDigest, f.tableDigest],
    [EXAMPLE_IDS.rowDigest, f.rowDigest],
    [EXAMPLE_IDS.fileDigest, f.fileDigest],
    [EXAMPLE_IDS.queueId, f.queueId],
    [EXAMPLE_IDS.itemId, f.itemId],
    [EXAMPLE_IDS.feedbackId, f.feedbackId],
    [EXAMPLE_IDS.modelId, f.modelId],
  ]
  let text = JSON.stringify(value)
  for (const [placeholder, id] of ids) if (!keep.includes(placeholder)) text = text.replaceAll(placeholder, id)
  return JSON.parse(text) as T
}

describe("every route's declared request example", () => {
  it('is answered 200 by its handler, sent as declared but for the ids of data the caller owns', async () => {
    // Prepare: a fresh project (the test above deletes its model), the example's chat model on the reference engine,
    // the example requests, destructive ones last
    const data = await buildFixtures(owner)
    await putModel({ id: EXAMPLE_IDS.model, backend: { kind: 'reference' }, entities: [owner.entity] })
    clearCatalogCache()
    // The fixtures' object is of another class: the create example publishes its own object id.
    const keep: Partial<Record<FunctionId, string[]>> = { 'tracing/create-obj': [EXAMPLE_IDS.objectId] }
    const headers: Partial<Record<FunctionId, Record<string, string>>> = {
      // OTLP names the project in a header, not in the body.
      'tracing/export-otel-traces': { project_id: data.project },
    }
    const probes: RouteProbe[] = []
    for (const fn of FUNCTIONS as readonly FunctionDeclaration[]) {
      fn.routes.forEach((route, index) => {
        const example = route.example
        if (example === undefined) return
        const { params, query, body } = withFixtureIds(example, data, owner.entity, keep[fn.id as FunctionId])
        const spec = { ...(params && { params }), ...(query && { query }), ...(body !== undefined && { body }) }
        const extra = headers[fn.id as FunctionId]
        probes.push(probe(fn.id as FunctionId, extra ? { ...spec, headers: extra } : spec, index))
      })
    }
    const destructive = (p: RouteProbe) => /delete|purge/.test(p.route.path) || p.route.method === 'DELETE'
    probes.sort((a, b) => Number(destructive(a)) - Number(destructive(b)))
    const failures: string[] = []

    // Act
    for (const p of probes) {
      const res = await callRoute(owner, p.probe)
      if (res.status !== 200) failures.push(`${probeName(p)} → ${res.status} ${res.text.slice(0, 200)}`)
    }

    // Assess
    expect(failures).toEqual([])
    expect(probes.length).toBeGreaterThan(50)
  })
})
