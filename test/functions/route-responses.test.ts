import { beforeAll, describe, expect, it } from 'vitest'
import * as z from 'zod/mini'
import { FUNCTIONS } from '#functions/manifest'
import { newCaller, type TestCaller } from '../support/auth.js'
import { buildFixtures, callRoute, type Fixtures, probe, probeName, projectProbes } from '../support/route-probes.js'
import { trajectory } from '../support/training.js'

let owner: TestCaller
let fixtures: Fixtures
beforeAll(async () => {
  owner = await newCaller()
  fixtures = await buildFixtures(owner)
})

describe("every route's happy-path answer", () => {
  it('matches the response schema its declaration documents, key for key at the top level', async () => {
    // Prepare: a valid request of the data's owner on every route, model routes last (the delete removes the model)
    const model = { model_id: fixtures.modelId }
    const probes = [
      probe('meta/get-health'),
      probe('meta/get-server-info'),
      probe('tracing/list-projects'),
      ...projectProbes(fixtures, owner.entity),
      probe('training/get-model-metrics', { params: model }),
      probe('training/log-trajectories', {
        params: model,
        body: { trajectory_groups: [{ trajectories: [trajectory(2)] }], split: 'train', step: 2 },
      }),
      probe('training/delete-preview-model', { params: model }),
    ]
    const failures: string[] = []
    const checked = new Set<unknown>()

    // Act
    for (const p of probes) {
      const schema = p.route.response
      if (schema === undefined) continue
      const res = await callRoute(owner, p.probe)
      checked.add(p.route)
      if (res.status !== 200) {
        failures.push(`${probeName(p)} → ${res.status} ${res.text.slice(0, 200)}`)
        continue
      }
      const parsed = z.safeParse(schema, res.json)
      if (!parsed.success) {
        failures.push(`${probeName(p)}: ${JSON.stringify(parsed.error.issues).slice(0, 300)}`)
        continue
      }
      // zod objects drop unknown keys silently: an answer with keys its schema lacks is under-documented.
      const documented = Object.keys(parsed.data as object).sort()
      const answered = Object.keys(res.json as object).sort()
      if (JSON.stringify(answered) !== JSON.stringify(documented)) {
        failures.push(`${probeName(p)}: answered keys ${answered.join(',')}, documented ${documented.join(',')}`)
      }
    }

    // Assess
    expect(failures).toEqual([])
    const withSchema = FUNCTIONS.flatMap((f) => f.routes).filter((r) => r.response !== undefined)
    expect(withSchema.filter((r) => !checked.has(r)).map((r) => `${r.method} ${r.path}`)).toEqual([])
  })
})
