import { describe, expect, it } from 'vitest'
import { app } from '#functions/training/get-model-metrics/handler'
import { app as logApp } from '#functions/training/log-trajectories/handler'
import { setPreviewModelStep } from '#shared/db/preview-model-repository'
import type { MetricsHistory } from '#shared/schemas/training-log'
import { jsonInit, newCaller, type TestCaller } from '../../support/auth.js'
import { newModel, trajectory } from '../../support/training.js'

async function logAt(caller: TestCaller, modelId: string, step: number, split: string, rewards: number[]) {
  await setPreviewModelStep(modelId, step)
  const body = { split, trajectory_groups: [{ trajectories: rewards.map((r) => trajectory(r, { solved: r > 0.5 })) }] }
  const res = await logApp.request(`/v1/preview/models/${modelId}/log`, jsonInit(body, caller.bearer))
  if (res.status !== 200) throw new Error(`log failed: ${res.status}`)
}

async function history(caller: TestCaller, modelId: string, query = '') {
  const res = await app.request(`/v1/preview/models/${modelId}/metrics${query}`, { headers: caller.bearer })
  return { status: res.status, json: (await res.json()) as MetricsHistory & { detail?: unknown } }
}

describe('GET /v1/preview/models/{model_id}/metrics', () => {
  it('returns plot-ready series per metric, ordered by step', async () => {
    // Prepare
    const caller = await newCaller()
    const model = await newModel(caller)
    await logAt(caller, model.id, 2, 'val', [1, 0])
    await logAt(caller, model.id, 0, 'val', [0, 0])
    await logAt(caller, model.id, 1, 'val', [1, 1])
    await logAt(caller, model.id, 1, 'train', [0.25])

    // Act
    const { status, json } = await history(caller, model.id, '?split=val')

    // Assess
    expect(status).toBe(200)
    expect(json.rows.map((r) => r.step)).toEqual([0, 1, 2])
    expect(json.series['val/reward']).toMatchObject({ steps: [0, 1, 2], values: [0, 1, 0.5] })
    expect(json.series['val/solved']).toMatchObject({ steps: [0, 1, 2], values: [0, 1, 0.5] })
    expect(json.series['val/reward_std_dev']?.values).toEqual([0, 0, 0.5])
    expect(json.series['train/reward']).toBeUndefined()
  })

  it('filters by after_step and merges splits when no split is given', async () => {
    // Prepare
    const caller = await newCaller()
    const model = await newModel(caller)
    await logAt(caller, model.id, 0, 'val', [0])
    await logAt(caller, model.id, 3, 'val', [1])
    await logAt(caller, model.id, 3, 'train', [0.5])
    await logAt(caller, model.id, 5, 'train', [0.75])

    // Act
    const valAfter = await history(caller, model.id, '?split=val&after_step=0')
    const allAfter = await history(caller, model.id, '?after_step=3')
    const all = await history(caller, model.id)

    // Assess
    expect(valAfter.json.rows.map((r) => [r.split, r.step])).toEqual([['val', 3]])
    expect(valAfter.json.after_step).toBe(0)
    expect(allAfter.json.rows.map((r) => [r.split, r.step])).toEqual([['train', 5]])
    expect(all.json.rows).toHaveLength(4)
    expect(all.json.series['train/reward']?.values).toEqual([0.5, 0.75])
  })

  it('answers an empty history for a model without logs', async () => {
    // Prepare
    const caller = await newCaller()
    const model = await newModel(caller)

    // Act
    const { status, json } = await history(caller, model.id)

    // Assess
    expect(status).toBe(200)
    expect(json).toEqual({ model_id: model.id, split: null, after_step: null, rows: [], series: {} })
  })

  it("answers 404 for another entity's model and 422 for a bad after_step", async () => {
    // Prepare
    const owner = await newCaller()
    const stranger = await newCaller()
    const model = await newModel(owner)

    // Act
    const foreign = await history(stranger, model.id)
    const bad = await history(owner, model.id, '?after_step=soon')

    // Assess
    expect(foreign.status).toBe(404)
    expect(bad.status).toBe(422)
    expect(bad.json.detail).toEqual([
      expect.objectContaining({
        type: 'string_pattern_mismatch',
        loc: ['query', 'after_step'],
        msg: "String should match pattern '^-?\\d{1,15}$'",
      }),
    ])
  })
})
