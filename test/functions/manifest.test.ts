import { existsSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { FUNCTIONS } from '#functions/manifest'
import { ROUTE_DOCS } from '#shared/routes/docs'
import { loadFunction } from '../../scripts/local/app.js'
import { newCaller } from '../support/auth.js'

describe('functions/manifest', () => {
  it('lists unique function ids, each with a handler.ts folder', () => {
    const ids = FUNCTIONS.map((f) => f.id)
    expect(new Set(ids).size).toBe(ids.length)
    for (const id of ids) expect(existsSync(`functions/${id}/handler.ts`), id).toBe(true)
  })

  it('declares each route once across all functions, with an OpenAPI description', () => {
    const routes = FUNCTIONS.flatMap((f) => f.routes.map((r) => `${r.method} ${r.path}`))
    expect(new Set(routes).size).toBe(routes.length)
    for (const route of routes) expect(ROUTE_DOCS[route], route).toBeDefined()
  })

  it('matches every declared route in its function app', async () => {
    const caller = await newCaller()
    for (const entry of FUNCTIONS) {
      const mod = await loadFunction(entry)
      expect(typeof (mod as unknown as { handler: unknown }).handler, entry.id).toBe('function')
      for (const route of entry.routes) {
        const path = route.path.replace(/:([A-Za-z_]+)/g, 'x')
        const res = await mod.app.fetch(
          new Request(`http://loom.test${path}`, {
            method: route.method,
            headers: { ...caller.bearer, 'content-type': 'application/json' },
            ...(route.method === 'GET' ? {} : { body: '{}' }),
          }),
        )
        expect(await res.text(), `${route.method} ${route.path}`).not.toContain('No route for')
      }
    }
  })
})
