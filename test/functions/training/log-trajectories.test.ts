import { describe, expect, it } from 'vitest'
import { app } from '#functions/training/log-trajectories/handler'
import { jsonInit, newCaller } from '../../support/auth.js'
import { newModel, trajectory } from '../../support/training.js'

describe('POST /v1/preview/models/{model_id}/log', () => {
  it('computes the worked example of the contract', async () => {
    // Prepare
    const caller = await newCaller()
    const model = await newModel(caller)
    const body = {
      model_id: model.id,
      split: 'val',
      trajectory_groups: [
        {
          trajectories: [
            trajectory(1.0, { correct: true, duration: 2.0 }),
            trajectory(0.0, { correct: false, duration: 4.0 }),
          ],
          metrics: { judge_score: 0.8 },
          exceptions: [],
        },
        {
          trajectories: [trajectory(0.5, { correct: true })],
          metrics: { judge_score: 0.4 },
          exceptions: [{ type: "<class 'ValueError'>", message: 'boom', traceback: 'Traceback ...' }],
        },
      ],
    }

    // Act
    const res = await app.request(`/v1/preview/models/${model.id}/log`, jsonInit(body, caller.bearer))

    // Assess
    expect(res.status).toBe(200)
    const json = await res.json()
    expect(json).toMatchObject({
      model_id: model.id,
      split: 'val',
      step: 0,
      group_count: 2,
      trajectory_count: 3,
      exception_count: 1,
    })
    expect(Object.keys(json.metrics).sort()).toEqual([
      'val/correct',
      'val/duration',
      'val/exception_rate',
      'val/group_metric_judge_score',
      'val/reward',
      'val/reward_std_dev',
    ])
    expect(json.metrics['val/reward']).toBeCloseTo(0.5, 12)
    expect(json.metrics['val/exception_rate']).toBeCloseTo(0.25, 12)
    expect(json.metrics['val/correct']).toBeCloseTo(2 / 3, 12)
    expect(json.metrics['val/duration']).toBeCloseTo(3.0, 12)
    expect(json.metrics['val/reward_std_dev']).toBeCloseTo(0.5, 12)
    expect(json.metrics['val/group_metric_judge_score']).toBeCloseTo(0.6, 12)
  })
})
