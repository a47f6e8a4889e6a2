import { ScanCommand } from '@aws-sdk/lib-dynamodb'
import { beforeEach, describe, expect, it } from 'vitest'
import * as z from 'zod/mini'
import { clearAuthCache } from '#shared/auth/authenticate'
import { config } from '#shared/config'
import { revokeApiKey } from '#shared/db/api-key-repository'
import { db, table } from '#shared/db/client'
import { addMembership } from '#shared/db/membership-repository'
import { createInferenceApp, createTracingApp, createTrainingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { jsonInit, newCaller } from '../../support/auth.js'

const ProjectBody = z.object({ project_id: z.string() })

const tracing = createTracingApp().post('/probe', validate('json', ProjectBody), (c) =>
  c.json({ user: c.get('auth').userId, project: c.req.valid('json').project_id }),
)
const inference = createInferenceApp().get('/v1/probe', (c) =>
  c.json({ user: c.get('auth').userId, project: c.get('project') }),
)
const training = createTrainingApp().get('/v1/preview/probe', (c) => c.json({ user: c.get('auth').userId }))

beforeEach(() => {
  clearAuthCache()
})

describe('Bearer auth on /v1 routes', () => {
  it('accepts a valid key and attributes usage to the key entity and project inference by default', async () => {
    // Prepare
    const caller = await newCaller()

    // Act
    const res = await inference.request('/v1/probe', { headers: caller.bearer })

    // Assess
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({
      user: caller.userId,
      project: { entity: caller.entity, project: 'inference', id: `${caller.entity}/inference` },
    })
  })

  it('uses the Compat-Project or OpenAI-Project header when it names an entity of the caller', async () => {
    const caller = await newCaller()
    const viaCompat = await inference.request('/v1/probe', {
      headers: { ...caller.bearer, 'compat-project': `${caller.entity}/chat` },
    })
    const viaOpenAi = await inference.request('/v1/probe', {
      headers: { ...caller.bearer, 'openai-project': `${caller.entity}/other` },
    })
    expect(((await viaCompat.json()) as { project: { id: string } }).project.id).toBe(`${caller.entity}/chat`)
    expect(((await viaOpenAi.json()) as { project: { id: string } }).project.id).toBe(`${caller.entity}/other`)
  })

  it('answers 403 in the OpenAI shape for a project of a foreign entity', async () => {
    const caller = await newCaller()
    const other = await newCaller()
    const res = await inference.request('/v1/probe', {
      headers: { ...caller.bearer, 'openai-project': `${other.entity}/p` },
    })
    expect(res.status).toBe(403)
    expect(await res.json()).toEqual({
      error: {
        message: `You do not have access to entity '${other.entity}'`,
        type: 'PermissionDeniedError',
        param: null,
        code: 403,
      },
    })
  })

  it('answers 401 Authentication failed for a missing, unknown or Basic credential', async () => {
    const caller = await newCaller()
    for (const headers of [{}, { authorization: 'Bearer nope' }, caller.basic, { authorization: 'Bearer' }]) {
      const res = await inference.request('/v1/probe', { headers })
      expect(res.status).toBe(401)
      expect(await res.json()).toEqual({
        error: { message: 'Authentication failed', type: 'AuthenticationError', param: null, code: 401 },
      })
    }
  })

  it('answers training routes with the FastAPI detail shape', async () => {
    const caller = await newCaller()
    const ok = await training.request('/v1/preview/probe', { headers: caller.bearer })
    const denied = await training.request('/v1/preview/probe', { headers: { authorization: 'Bearer wrong' } })
    expect(ok.status).toBe(200)
    expect(denied.status).toBe(401)
    expect(await denied.json()).toEqual({ detail: 'Authentication failed' })
  })
})

describe('Basic auth on tracing routes', () => {
  it('accepts Basic api:<key> and Bearer, recording the authenticated user', async () => {
    const caller = await newCaller()
    for (const headers of [caller.basic, caller.bearer]) {
      const res = await tracing.request('/probe', jsonInit({ project_id: `${caller.entity}/p` }, headers))
      expect(res.status).toBe(200)
      expect(await res.json()).toEqual({ user: caller.userId, project: `${caller.entity}/p` })
    }
  })

  it('answers 401 with a reason for a wrong password and 403 for a foreign project_id', async () => {
    const caller = await newCaller()
    const other = await newCaller()
    const wrong = `Basic ${Buffer.from('api:not-a-key').toString('base64')}`
    const unauthorized = await tracing.request(
      '/probe',
      jsonInit({ project_id: `${caller.entity}/p` }, { authorization: wrong }),
    )
    const forbidden = await tracing.request('/probe', jsonInit({ project_id: `${other.entity}/p` }, caller.basic))
    expect(unauthorized.status).toBe(401)
    expect(await unauthorized.json()).toEqual({ reason: 'Authentication failed' })
    expect(forbidden.status).toBe(403)
    expect(await forbidden.json()).toEqual({ reason: `You do not have access to entity '${other.entity}'` })
  })

  it('grants a second entity once the user is added to it', async () => {
    const caller = await newCaller()
    const team = `team-${caller.userId}`
    await addMembership({ userId: caller.userId, entity: team, role: 'member', addedAt: new Date().toISOString() })
    const res = await tracing.request('/probe', jsonInit({ project_id: `${team}/p` }, caller.basic))
    expect(res.status).toBe(200)
  })
})

describe('revoked keys', () => {
  it('stop working once the cache entry expires', async () => {
    // Prepare
    const caller = await newCaller()
    const before = await inference.request('/v1/probe', { headers: caller.bearer })
    await revokeApiKey(caller.keyId, new Date().toISOString())

    // Act: within the TTL the cached look-up still answers; after it, the revocation holds.
    const cached = await inference.request('/v1/probe', { headers: caller.bearer })
    const ttl = config.authCacheTtlMs
    config.authCacheTtlMs = 0
    clearAuthCache()
    const after = await inference.request('/v1/probe', { headers: caller.bearer })
    config.authCacheTtlMs = ttl

    // Assess
    expect(before.status).toBe(200)
    expect(cached.status).toBe(200)
    expect(after.status).toBe(401)
  })
})

describe('key storage', () => {
  it('never writes the plaintext key to the table', async () => {
    const caller = await newCaller()
    const { Items = [] } = await db().send(new ScanCommand({ TableName: table() }))
    const dump = JSON.stringify(Items)
    expect(dump).toContain(caller.keyId)
    expect(dump).not.toContain(caller.key)
    expect(dump).not.toContain(caller.key.slice(5, 25))
  })
})
