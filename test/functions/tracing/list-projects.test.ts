import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { app as createFeedbackApp } from '#functions/tracing/create-feedback/handler'
import { app, handler } from '#functions/tracing/list-projects/handler'
import { addMembership } from '#shared/db/membership-repository'
import { forgetRegisteredProjects, listProjects, registerProject } from '#shared/db/project-repository'
import { newCaller, type TestCaller } from '../../support/auth.js'
import { startPart, writeCalls } from '../../support/calls.js'
import { lambdaContext, restEvent } from '../../support/events.js'
import { publish } from '../../support/objects.js'
import { send } from '../../support/tracing.js'
import { newModel } from '../../support/training.js'

async function projects(caller: TestCaller): Promise<{ status: number; body: { projects: { project_id: string }[] } }> {
  const res = await app.request('/projects', { headers: caller.basic })
  return { status: res.status, body: (await res.json()) as { projects: { project_id: string }[] } }
}

describe('GET /projects', () => {
  it('lists the projects that received calls, objects, feedback or preview models, by name', async () => {
    // Prepare
    const caller = await newCaller()
    const callStart = startPart(`${caller.entity}/calls`)
    await writeCalls(caller, [{ start: callStart }])
    await publish({ ...caller, project: `${caller.entity}/objects` }, 'dataset', { rows: [1, 2] })
    const feedback = await send(
      createFeedbackApp,
      '/feedback/create',
      {
        project_id: `${caller.entity}/feedback`,
        weave_ref: `weave:///${caller.entity}/feedback/call/${randomUUID()}`,
        feedback_type: 'note',
        payload: { text: 'ok' },
      },
      caller,
    )
    await newModel(caller, 'training')

    // Act
    const res = await projects(caller)

    // Assess
    expect(feedback.status).toBe(200)
    expect(res.status).toBe(200)
    expect(res.body.projects.map((p) => p.project_id)).toEqual(
      ['calls', 'feedback', 'objects', 'training'].map((p) => `${caller.entity}/${p}`),
    )
    expect(res.body.projects[0]).toEqual({
      project_id: `${caller.entity}/calls`,
      entity: caller.entity,
      project: 'calls',
      first_seen_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    })
  })

  it("lists every entity of the key's user and never another tenant's projects", async () => {
    // Prepare
    const other = await newCaller()
    await writeCalls(other, [{ start: startPart(`${other.entity}/secret`) }])
    const caller = await newCaller()
    const shared = `team-${randomUUID().slice(0, 8)}`
    await addMembership({ userId: caller.userId, entity: shared, role: 'member', addedAt: new Date().toISOString() })
    await registerProject(`${shared}/team-project`)
    await writeCalls(caller, [{ start: startPart(`${caller.entity}/mine`) }])

    // Act
    const res = await projects(caller)

    // Assess
    expect(res.body.projects.map((p) => p.project_id).sort()).toEqual(
      [`${caller.entity}/mine`, `${shared}/team-project`].sort(),
    )
  })

  it('answers an empty list for a key whose entities hold no data', async () => {
    const res = await projects(await newCaller())
    expect(res).toEqual({ status: 200, body: { projects: [] } })
  })

  it('needs a key', async () => {
    const res = await app.request('/projects')
    expect(res.status).toBe(401)
    expect(await res.json()).toEqual({ reason: 'Authentication failed' })
  })

  it('works as a Lambda with a REST API proxy event', async () => {
    // Prepare
    const caller = await newCaller()
    await registerProject(`${caller.entity}/lambda`)

    // Act
    const result = await handler(restEvent({ path: '/projects', headers: caller.bearer }), lambdaContext())

    // Assess
    expect(result.statusCode).toBe(200)
    expect(JSON.parse(result.body).projects.map((p: { project_id: string }) => p.project_id)).toEqual([
      `${caller.entity}/lambda`,
    ])
  })
})

describe('project registry', () => {
  it('keeps the first time a project was seen across repeated registrations', async () => {
    // Prepare
    const entity = `ent-${randomUUID().slice(0, 8)}`
    await registerProject(`${entity}/p`, new Date('2025-01-01T00:00:00Z'))
    forgetRegisteredProjects()

    // Act: a second process (nothing remembered) registers it again later
    await registerProject(`${entity}/p`, new Date('2025-06-01T00:00:00Z'))

    // Assess
    expect(await listProjects([entity])).toEqual([
      { project_id: `${entity}/p`, entity, project: 'p', first_seen_at: '2025-01-01T00:00:00.000Z' },
    ])
  })

  it('stores project names longer than a DynamoDB key allows, whole', async () => {
    // Prepare
    const entity = `ent-${randomUUID().slice(0, 8)}`
    const long = 'x'.repeat(2_000)

    // Act
    await registerProject(`${entity}/${long}`)

    // Assess
    const [project] = await listProjects([entity])
    expect(project?.project).toBe(long)
  })

  it('ignores a project id without an entity', async () => {
    await expect(registerProject('no-slash')).resolves.toBeUndefined()
  })
})
