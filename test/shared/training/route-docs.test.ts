import { describe, expect, it } from 'vitest'
import { toJSONSchema } from 'zod/mini'
import { FUNCTIONS } from '#functions/manifest'
import { TRAINING_ROUTE_DOCS } from '#shared/training/route-docs'

describe('TRAINING_ROUTE_DOCS', () => {
  it('describes every training route of the manifest with schemas that convert to JSON Schema', () => {
    // Prepare
    const routes = FUNCTIONS.filter((f) => f.family === 'training').flatMap((f) =>
      f.routes.map((r) => `${r.method} ${r.path}`),
    )

    // Act
    const converted = Object.values(TRAINING_ROUTE_DOCS).flatMap((doc) =>
      [doc.body, doc.query, doc.response].flatMap((s) =>
        s === undefined ? [] : [toJSONSchema(s, { io: 'input', unrepresentable: 'any' })],
      ),
    )

    // Assess
    expect(Object.keys(TRAINING_ROUTE_DOCS).sort()).toEqual(routes.sort())
    expect(converted.every((schema) => typeof schema === 'object')).toBe(true)
  })
})
