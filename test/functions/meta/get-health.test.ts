import { describe, expect, it } from 'vitest'
import { app, handler } from '#functions/meta/get-health/handler'
import { lambdaContext, restEvent } from '../../support/events.js'

describe('GET /health', () => {
  it('answers ok without credentials', async () => {
    // Act
    const res = await app.request('/health')

    // Assess
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ status: 'ok' })
    expect(res.headers.get('x-request-id')).toBeTruthy()
  })

  it('answers unknown paths with a JSON 404', async () => {
    const res = await app.request('/nope')
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({ reason: 'No route for GET /nope' })
  })

  it('works when invoked as a Lambda with a REST API proxy event', async () => {
    const result = await handler(restEvent({ path: '/health' }), lambdaContext())
    expect(result.statusCode).toBe(200)
    expect(JSON.parse(result.body)).toEqual({ status: 'ok' })
    expect(result.multiValueHeaders?.['x-request-id']).toEqual(['lambda-req-1'])
  })
})
