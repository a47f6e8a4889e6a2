import { describe, expect, it } from 'vitest'
import { createLocalApp } from '../../scripts/local/app.js'
import { newCaller } from '../support/auth.js'

describe('local server dispatch', () => {
  it("applies each family's own auth and error shape to its routes only", async () => {
    // Prepare
    const app = await createLocalApp()
    const caller = await newCaller()

    // Act
    const inference = await app.request('/v1/models', { headers: caller.basic })
    const tracing = await app.request('/calls/query_stats', {
      method: 'POST',
      headers: { ...caller.basic, 'content-type': 'application/json' },
      body: JSON.stringify({ project_id: `${caller.entity}/p` }),
    })
    const unknown = await app.request('/nowhere')

    // Assess: Basic is a tracing scheme, so /v1 refuses it in the OpenAI shape while tracing accepts it.
    expect(inference.status).toBe(401)
    expect(((await inference.json()) as { error: { type: string } }).error.type).toBe('AuthenticationError')
    expect(tracing.status).toBe(200)
    expect(unknown.status).toBe(404)
  })

  it('serves a route with a trailing slash as API Gateway does', async () => {
    const app = await createLocalApp()
    const res = await app.request('/v1/chat/completions/', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    })
    expect(res.status).toBe(401)
    expect(await res.json()).toEqual({
      error: { message: 'Authentication failed', type: 'AuthenticationError', param: null, code: 401 },
    })
  })
})
