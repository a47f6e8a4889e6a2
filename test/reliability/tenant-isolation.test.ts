import { beforeAll, describe, expect, it } from 'vitest'
import { FUNCTIONS, type FunctionId } from '#functions/manifest'
import { handler as queryQueuesHandler } from '#functions/tracing/query-annotation-queues/handler'
import { handler as queryFeedbackHandler } from '#functions/tracing/query-feedback/handler'
import { handler as queryTableHandler } from '#functions/tracing/query-table/handler'
import { handler as readCallHandler } from '#functions/tracing/read-call/handler'
import { handler as readObjHandler } from '#functions/tracing/read-obj/handler'
import { handler as readRefsHandler } from '#functions/tracing/read-refs-batch/handler'
import { newCaller, type TestCaller } from '../support/auth.js'
import { authorizerFor } from '../support/calls.js'
import { restEvent } from '../support/events.js'
import { invokeLambda } from '../support/lambda-invoke.js'
import {
  buildFixtures,
  callRoute as call,
  declaredRoute,
  type Fixtures,
  probe,
  probeName,
  projectProbes,
} from '../support/route-probes.js'
import { trajectory } from '../support/training.js'

/** Secrets planted in B's fixtures; none may appear in anything A receives. */
const SECRETS = [
  'SECRET-INPUT',
  'SECRET-OUTPUT',
  'SECRET-OBJ',
  'SECRET-ROW',
  'SECRET-FILE',
  'SECRET-NOTE',
  'secret_metric',
]

let a: TestCaller
let b: TestCaller
let fixtures: Fixtures
beforeAll(async () => {
  a = await newCaller()
  b = await newCaller()
  fixtures = await buildFixtures(b)
})

describe("a key of entity A against entity B's project", () => {
  it('is refused with 403 and no data on every route that names a project, while B itself is served', async () => {
    // Prepare
    const probes = projectProbes(fixtures, b.entity)
    const chat = declaredRoute('inference/create-chat-completion')
    const failures: string[] = []

    // Act
    for (const p of probes) {
      const res = await call(a, p.probe)
      if (res.status !== 403) failures.push(`A ${probeName(p)} → ${res.status} ${res.text.slice(0, 160)}`)
      const leaked = SECRETS.filter((s) => res.text.includes(s) || res.text.includes(fixtures.callId))
      if (leaked.length > 0) failures.push(`A ${probeName(p)} leaked ${leaked.join(', ')}`)
    }
    const ownStatuses: string[] = []
    for (const p of probes) {
      const res = await call(b, p.probe)
      // Chat completions names no served model here: B gets past the project check to the model lookup (404).
      const expected = p.route === chat ? 404 : 200
      if (res.status !== expected) ownStatuses.push(`B ${probeName(p)} → ${res.status} ${res.text.slice(0, 200)}`)
    }

    // Assess
    expect(failures).toEqual([])
    expect(ownStatuses).toEqual([])
    // Every authenticated route is probed here, except the model routes (addressed by id, below) and the routes that
    // name no project (their own test below).
    const unprobed = FUNCTIONS.filter((f) => f.auth && !NO_PROJECT.includes(f.id))
      .flatMap((f) => f.routes)
      .filter((r) => !r.path.includes(':model_id') && !probes.some((p) => p.route === r))
    expect(unprobed.map((r) => `${r.method} ${r.path}`)).toEqual([])
  })
})

/** Authenticated routes that name no project: they answer for the key's own entities only. */
const NO_PROJECT: readonly FunctionId[] = ['tracing/list-projects']

describe('GET /projects', () => {
  it("lists B's project to B and never to A", async () => {
    // Act
    const [asA, asB] = await Promise.all([
      call(a, { method: 'GET', path: '/projects' }),
      call(b, { method: 'GET', path: '/projects' }),
    ])

    // Assess
    expect(asA.status).toBe(200)
    expect(asA.text).not.toContain(b.entity)
    expect(asB.status).toBe(200)
    expect(asB.text).toContain(`"project_id":"${fixtures.project}"`)
  })
})

describe("ids of entity B's data used by entity A in A's own project", () => {
  it('find nothing: 404 or empty, never B’s data', async () => {
    // Prepare: fresh data of a fresh entity B (the test above let B purge and delete its own)
    const f = await buildFixtures(await newCaller())
    const mine = `${a.entity}/proj`
    const asMine: Fixtures = { ...f, project: mine }
    const probes = projectProbes(asMine, a.entity)
    const byId = (
      [
        'tracing/read-call',
        'tracing/update-call',
        'tracing/calls-usage',
        'tracing/read-obj',
        'tracing/read-refs-batch',
        'tracing/add-obj-tags',
        'tracing/set-obj-aliases',
        'tracing/query-table',
        'tracing/update-table',
        'tracing/create-table-from-digests',
        'tracing/query-table-stats',
        'tracing/query-table-stats-batch',
        'tracing/read-file-content',
        'tracing/replace-feedback',
        'tracing/read-annotation-queue',
        'tracing/update-annotation-queue',
        'tracing/add-annotation-queue-items',
        'tracing/query-annotation-queue-items',
        'tracing/get-annotation-queues-stats',
        'tracing/update-annotation-queue-item-progress',
        'tracing/purge-feedback',
        'tracing/delete-annotation-queue',
      ] as const
    ).map((id) => declaredRoute(id))
    const model = { model_id: f.modelId }
    const models = [
      probe('training/get-model-metrics', { params: model }),
      probe('training/log-trajectories', {
        params: model,
        body: { trajectory_groups: [{ trajectories: [trajectory(0)] }], split: 'train', step: 2 },
      }),
      probe('training/list-checkpoints', { params: model, query: { limit: '1', order: 'desc' } }),
      probe('training/delete-checkpoints', { params: model, body: { steps: [1] } }),
      probe('training/delete-preview-model', { params: model }),
    ].map((p) => p.probe)
    const results: string[] = []

    // Act
    for (const route of byId) {
      const found = probes.find((p) => p.route === route)
      if (found === undefined) throw new Error(`no probe of ${route.method} ${route.path}`)
      const name = probeName(found)
      const res = await call(a, found.probe)
      const leaked = SECRETS.filter((s) => res.text.includes(s))
      // A foreign id is answered as an unknown one: not found (404, or 400 where the API reports a missing item as a
      // bad request), or an empty result naming nothing of B's.
      const emptyOrMissing =
        res.status === 404 || res.status === 400 || (res.status === 200 && !res.text.includes(f.project))
      results.push(
        `${name}: ${emptyOrMissing && leaked.length === 0 ? 'ok' : `${res.status} ${res.text.slice(0, 160)}`}`,
      )
    }
    for (const probe of models) {
      const res = await call(a, probe)
      results.push(
        `${probe.method} ${probe.path}: ${res.status === 404 ? 'ok' : `${res.status} ${res.text.slice(0, 160)}`}`,
      )
    }
    const owner = { ...a, bearer: f.owner.bearer }
    const stillThere = await call(owner, { method: 'GET', path: `/v1/preview/models/${f.modelId}/metrics` })
    const bCall = await call(owner, {
      method: 'POST',
      path: '/call/read',
      body: { project_id: f.project, id: f.callId },
    })

    // Assess
    expect(results.filter((r) => !r.endsWith(': ok'))).toEqual([])
    expect(results).toHaveLength(byId.length + models.length)
    expect(stillThere.status).toBe(200)
    expect(stillThere.text).toContain('secret_metric')
    expect(bCall.text).toContain('SECRET-INPUT')
    expect(bCall.text).not.toContain('renamed')
  })
})

describe('behind the REQUEST authorizer (the deployed Lambda path)', () => {
  it("refuses A's principal on B's project with 403 and serves B's own principal", async () => {
    // Prepare
    const f = fixtures
    const cases = [
      { handler: readCallHandler, path: '/call/read', body: { project_id: f.project, id: f.callId } },
      {
        handler: readObjHandler,
        path: '/obj/read',
        body: { project_id: f.project, object_id: f.objectId, digest: f.objectDigest },
      },
      {
        handler: readRefsHandler,
        path: '/refs/read_batch',
        body: { refs: [`weave:///${f.project}/object/${f.objectId}:${f.objectDigest}`] },
      },
      { handler: queryFeedbackHandler, path: '/feedback/query', body: { project_id: f.project } },
      { handler: queryQueuesHandler, path: '/annotation_queues/query', body: { project_id: f.project } },
      { handler: queryTableHandler, path: '/table/query', body: { project_id: f.project, digest: f.tableDigest } },
    ]
    const invoke = async (c: (typeof cases)[number], who: TestCaller) => {
      const event = restEvent({
        method: 'POST',
        path: c.path,
        headers: { 'content-type': 'application/json', ...who.basic },
        body: JSON.stringify(c.body),
        authorizer: authorizerFor(who),
      })
      // Streamed (the large reads) or buffered, as each function's manifest entry declares.
      const result = await invokeLambda(c.handler, event)
      return `${c.path} ${result.statusCode}${SECRETS.some((s) => result.body.includes(s)) ? ' with secrets' : ''}`
    }

    // Act
    const asA = []
    const asB = []
    for (const c of cases) {
      asA.push(await invoke(c, a))
      asB.push(await invoke(c, b))
    }

    // Assess
    expect(asA).toEqual(cases.map((c) => `${c.path} 403`))
    expect(asB.map((r) => r.split(' ')[1])).toEqual(cases.map(() => '200'))
  })
})
