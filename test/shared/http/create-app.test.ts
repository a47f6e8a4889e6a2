import { describe, expect, it } from 'vitest'
import { createInferenceApp, createTracingApp, createTrainingApp } from '#shared/http/create-app'
import { newCaller } from '../../support/auth.js'

const apps = {
  inference: createInferenceApp()
    .post('/v1/things', (c) => c.json({ ok: true }))
    .get('/v1/things/:id', (c) => c.json({ id: c.req.param('id') })),
  training: createTrainingApp().post('/v1/preview/things', (c) => c.json({ ok: true })),
  tracing: createTracingApp().post('/things', (c) => c.json({ ok: true })),
}

async function send(family: keyof typeof apps, method: string, path: string) {
  const caller = await newCaller()
  const res = await apps[family].request(path, { method, headers: caller.bearer })
  return { status: res.status, allow: res.headers.get('allow'), body: await res.json() }
}

describe('family apps: requests no route serves', () => {
  it('answers an unknown inference path 404 with the status phrase as type (docs/inference.md §4.2)', async () => {
    // Act
    const res = await send('inference', 'GET', '/v1/nope')

    // Assess
    expect(res).toEqual({
      status: 404,
      allow: null,
      body: { error: { message: 'No route for GET /v1/nope', type: 'Not Found', param: null, code: 404 } },
    })
  })

  it('answers a known inference path with another method 405 Method Not Allowed and Allow', async () => {
    // Act
    const post = await send('inference', 'GET', '/v1/things')
    const param = await send('inference', 'DELETE', '/v1/things/42')

    // Assess
    expect(post).toEqual({
      status: 405,
      allow: 'POST',
      body: {
        error: {
          message: 'Method GET is not allowed for /v1/things',
          type: 'Method Not Allowed',
          param: null,
          code: 405,
        },
      },
    })
    expect(param.status).toBe(405)
    expect(param.allow).toBe('GET')
  })

  it('keeps the tracing and training shapes, 404 for an unknown path or another method', async () => {
    // Act
    const tracing = await send('tracing', 'GET', '/nope')
    const tracingMethod = await send('tracing', 'GET', '/things')
    const training = await send('training', 'GET', '/v1/preview/nope')
    const trainingMethod = await send('training', 'GET', '/v1/preview/things')

    // Assess
    expect(tracing).toEqual({ status: 404, allow: null, body: { reason: 'No route for GET /nope' } })
    expect(tracingMethod).toEqual({ status: 404, allow: null, body: { reason: 'No route for GET /things' } })
    expect(training).toEqual({ status: 404, allow: null, body: { detail: 'No route for GET /v1/preview/nope' } })
    expect(trainingMethod).toEqual({
      status: 404,
      allow: null,
      body: { detail: 'No route for GET /v1/preview/things' },
    })
  })
})
