import { describe, expect, it } from 'vitest'
import { app } from '#functions/meta/get-server-info/handler'

describe('GET /server_info', () => {
  it('answers without credentials', async () => {
    const res = await app.request('/server_info')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({ min_required_weave_python_version: '0.0.0', trace_server_version: null })
  })
})
