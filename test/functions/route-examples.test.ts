import { describe, expect, it } from 'vitest'
import * as z from 'zod/mini'
import { FUNCTIONS } from '#functions/manifest'
import { app } from '#functions/meta/get-openapi/handler'
import type { FunctionDeclaration, RouteDeclaration } from '#shared/routes/declare'

type Operation = {
  parameters: { name: string; in: 'path' | 'query'; example?: unknown }[]
  requestBody?: { content: Record<string, { example?: unknown }> }
  responses: Record<string, { content?: Record<string, { example?: unknown }> }>
}

const ROUTES: { name: string; route: RouteDeclaration }[] = (FUNCTIONS as readonly FunctionDeclaration[]).flatMap(
  (fn) => fn.routes.map((route) => ({ name: `${route.method} ${route.path}`, route })),
)

const pathParams = (route: RouteDeclaration) => [...route.path.matchAll(/:([A-Za-z_]+)/g)].map(([, name]) => name)

// `safeParse`'s issues, short enough for a failure message.
function issues(schema: z.core.$ZodType, value: unknown): string | undefined {
  const parsed = z.safeParse(schema, value)
  return parsed.success ? undefined : JSON.stringify(parsed.error.issues).slice(0, 300)
}

// Every `example` key anywhere in the document, for checking that only declared examples appear.
function countExamples(value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0
  return Object.entries(value).reduce((n, [key, v]) => n + (key === 'example' ? 1 : 0) + countExamples(v), 0)
}

describe('route examples', () => {
  it('declares a request example for every body, query and path parameter, and no part the route lacks', () => {
    // Prepare
    const missing: string[] = []

    // Act
    for (const { name, route } of ROUTES) {
      const example = route.example ?? {}
      if ((route.body !== undefined) !== (example.body !== undefined)) missing.push(`${name}: body`)
      if ((route.query !== undefined) !== (example.query !== undefined)) missing.push(`${name}: query`)
      if (route.response === undefined && example.response !== undefined) missing.push(`${name}: response`)
      const declared = Object.keys(example.params ?? {}).sort()
      if (JSON.stringify(declared) !== JSON.stringify(pathParams(route).sort())) missing.push(`${name}: params`)
    }

    // Assess
    expect(missing).toEqual([])
  })

  it("parses each request example with the route's body and query schemas", () => {
    // Prepare
    const failures: string[] = []

    // Act
    for (const { name, route } of ROUTES) {
      const { body, query } = route.example ?? {}
      const bodyIssues = route.body && issues(route.body, body)
      const queryIssues = route.query && issues(route.query, query)
      if (bodyIssues) failures.push(`${name} body: ${bodyIssues}`)
      if (queryIssues) failures.push(`${name} query: ${queryIssues}`)
      // A query string carries strings only: an example must be sendable as written.
      for (const [key, value] of Object.entries(query ?? {})) {
        if (typeof value !== 'string') failures.push(`${name} query ${key}: not a string`)
      }
    }

    // Assess
    expect(failures).toEqual([])
  })

  it("parses each response example with the route's response schema, key for key at the top level", () => {
    // Prepare
    const withResponse = ROUTES.filter(({ route }) => route.example?.response !== undefined)
    const failures: string[] = []

    // Act
    for (const { name, route } of withResponse) {
      const example = route.example?.response
      const parsed = route.response && z.safeParse(route.response, example)
      if (!parsed?.success) {
        failures.push(`${name}: ${parsed ? JSON.stringify(parsed.error.issues).slice(0, 300) : 'no schema'}`)
        continue
      }
      // zod objects drop unknown keys silently: an example with keys the schema lacks would document a wrong answer.
      if (JSON.stringify(Object.keys(parsed.data as object)) !== JSON.stringify(Object.keys(example as object))) {
        failures.push(
          `${name}: example keys ${Object.keys(example as object)}, schema keeps ${Object.keys(parsed.data as object)}`,
        )
      }
    }

    // Assess
    expect(failures).toEqual([])
    expect(withResponse.length).toBeGreaterThan(10)
  })

  it('shows each example in /openapi.json on its request body, parameters and 200 response, and nowhere else', async () => {
    // Act
    const doc = (await (await app.request('/openapi.json')).json()) as {
      paths: Record<string, Record<string, Operation>>
    }

    // Assess
    let declared = 0
    for (const { name, route } of ROUTES) {
      const example = route.example ?? {}
      const operation = doc.paths[route.path.replace(/:([A-Za-z_]+)/g, '{$1}')]?.[route.method.toLowerCase()]
      expect(operation, name).toBeDefined()
      const parameter = (where: 'path' | 'query', key: string) =>
        operation?.parameters.find((p) => p.in === where && p.name === key)?.example
      for (const [key, value] of Object.entries(example.params ?? {})) expect(parameter('path', key), name).toBe(value)
      for (const [key, value] of Object.entries(example.query ?? {})) expect(parameter('query', key), name).toBe(value)
      if (example.body !== undefined) {
        expect(operation?.requestBody?.content['application/json']?.example, name).toEqual(example.body)
      }
      if (example.response !== undefined) {
        expect(operation?.responses['200']?.content?.['application/json']?.example, name).toEqual(example.response)
      }
      declared +=
        Object.keys(example.params ?? {}).length +
        Object.keys(example.query ?? {}).length +
        (example.body === undefined ? 0 : 1) +
        (example.response === undefined ? 0 : 1)
    }
    expect(countExamples(doc)).toBe(declared)
  })
})
