import { describe, expect, it } from 'vitest'
import { app } from '#functions/meta/get-health/handler'

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
})
