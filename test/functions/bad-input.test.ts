import { describe, expect, it } from 'vitest'
import { FUNCTIONS } from '#functions/manifest'
import { config } from '#shared/config'
import { loadFunction } from '../../scripts/local/app.js'
import { newCaller } from '../support/auth.js'

const OVERSIZED = `{"x":"${'a'.repeat(config.maxBodyBytes)}"}`

const CASES: { name: string; contentType: string; body: string }[] = [
  { name: 'malformed JSON', contentType: 'application/json', body: '{"project_id": "a/b", ' },
  { name: 'a wrong content type', contentType: 'text/plain', body: 'hello' },
  { name: 'an oversized body', contentType: 'application/json', body: OVERSIZED },
]

function shapeOf(family: string, body: unknown): boolean {
  const b = body as Record<string, unknown>
  if (family === 'inference') return typeof (b.error as { message?: unknown })?.message === 'string'
  if (family === 'training') return b.detail !== undefined
  return typeof b.reason === 'string' || Array.isArray(b.detail)
}

describe('every endpoint under bad input', () => {
  for (const { name, contentType, body } of CASES) {
    it(`answers ${name} with a 4xx in its family's error shape, never a 5xx`, async () => {
      const caller = await newCaller()
      const failures: string[] = []
      for (const entry of FUNCTIONS.filter((f) => f.auth)) {
        const { app } = await loadFunction(entry)
        for (const route of entry.routes.filter((r) => r.method !== 'GET')) {
          const path = route.path.replace(/:([A-Za-z_]+)/g, 'x')
          const res = await app.fetch(
            new Request(`http://loom.test${path}`, {
              method: route.method,
              headers: { ...caller.bearer, 'content-type': contentType },
              body,
            }),
          )
          const json = await res.json().catch(() => undefined)
          if (res.status < 400 || res.status >= 500 || !shapeOf(entry.family, json)) {
            failures.push(`${route.method} ${route.path} → ${res.status} ${JSON.stringify(json)?.slice(0, 120)}`)
          }
        }
      }
      expect(failures).toEqual([])
    })
  }
})
