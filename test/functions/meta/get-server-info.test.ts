import { describe, expect, it } from 'vitest'
import { app, handler } from '#functions/meta/get-server-info/handler'
import { lambdaContext, restEvent } from '../../support/events.js'

describe('GET /server_info', () => {
  it('answers without credentials', async () => {
    const res = await app.request('/server_info')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ min_required_weave_python_version: '0.0.0', trace_server_version: null })
  })

  it('answers a REST API proxy event through the Lambda handler', async () => {
    // Act
    const result = await handler(restEvent({ path: '/server_info' }), lambdaContext())

    // Assess
    expect(result.statusCode).toBe(200)
    expect(JSON.parse(result.body)).toEqual({ min_required_weave_python_version: '0.0.0', trace_server_version: null })
    expect(result.multiValueHeaders?.['x-request-id']).toEqual(['lambda-req-1'])
  })
})
