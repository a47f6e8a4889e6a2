import { existsSync, readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { toJSONSchema } from 'zod/mini'
import { FUNCTIONS } from '#functions/manifest'
import { loadFunction } from '../../scripts/local/app.js'
import { newCaller } from '../support/auth.js'

describe('functions/manifest', () => {
  it('lists unique function ids, each declared in the route.ts beside its handler.ts', async () => {
    const ids = FUNCTIONS.map((f) => f.id)
    expect(new Set(ids).size).toBe(ids.length)
    for (const entry of FUNCTIONS) {
      expect(existsSync(`functions/${entry.id}/handler.ts`), entry.id).toBe(true)
      const { route } = (await import(/* @vite-ignore */ `#functions/${entry.id}/route`)) as { route: unknown }
      expect(route, entry.id).toBe(entry)
    }
  })

  it('declares each route once across all functions, with a summary and JSON Schema-convertible schemas', () => {
    const routes = FUNCTIONS.flatMap((f) => f.routes)
    const keys = routes.map((r) => `${r.method} ${r.path}`)
    expect(new Set(keys).size).toBe(keys.length)
    for (const route of routes) {
      expect(route.summary, `${route.method} ${route.path}`).not.toBe('')
      for (const schema of [route.body, route.query, route.response]) {
        if (schema !== undefined)
          expect(typeof toJSONSchema(schema, { io: 'input', unrepresentable: 'any' })).toBe('object')
      }
    }
  })

  it('exports the Lambda entry its transfer mode needs: lambdaStreamHandler where it streams, lambdaHandler elsewhere', () => {
    for (const entry of FUNCTIONS) {
      // Act: a STREAM integration reads the runtime's response stream, a buffered one the returned result; a
      // mismatch answers nothing usable in AWS while every local test passes.
      const entryPoint = /^export const handler = (\w+)\(app\b/m.exec(
        readFileSync(`functions/${entry.id}/handler.ts`, 'utf8'),
      )?.[1]

      // Assess
      expect(entryPoint, entry.id).toBe(entry.stream ? 'lambdaStreamHandler' : 'lambdaHandler')
      if (entry.longRunning) expect(entry.stream, entry.id).toBe(true)
    }
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
