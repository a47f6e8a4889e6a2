import { describe, expect, it } from 'vitest'
import { parseJsonWithElements } from '#shared/http/read-json'
import { GROUPS_KEY, parseLogInput } from '#shared/training/log-input'
import { trainingLogCall } from '#shared/training/log-trace'
import { logTrajectories } from '#shared/training/log-trajectories'
import { registerModel } from '#shared/training/preview-models'
import { newCaller } from '../../support/auth.js'
import { trajectory } from '../../support/training.js'

describe('logTrajectories', () => {
  it('marks an idempotent replay, whose trace keeps the first call id', async () => {
    // Prepare
    const caller = await newCaller()
    const principal = { userId: caller.userId, keyId: caller.keyId, entity: caller.entity, entities: [caller.entity] }
    const { model } = await registerModel(principal, { project: 'rl', name: 'agent', base_model: 'base' })
    const body = { split: 'val', trajectory_groups: [{ trajectories: [trajectory(1), trajectory(0)] }] }
    const input = () => parseLogInput(model.id, parseJsonWithElements(JSON.stringify(body), GROUPS_KEY), 'key-1')
    const startedAt = new Date('2025-03-03T03:03:03.000Z')

    // Act
    const first = await logTrajectories(principal, input(), startedAt)
    const second = await logTrajectories(principal, input())

    // Assess
    expect([first.replayed, second.replayed]).toEqual([false, true])
    expect(second.response).toEqual(first.response)
    expect(first.response.recorded_at).toBe('2025-03-03T03:03:03.000Z')
    expect(trainingLogCall(second, caller.userId).id).toBe(trainingLogCall(first, caller.userId).id)
    expect(trainingLogCall(first, caller.userId)).toMatchObject({
      projectId: `${caller.entity}/rl`,
      opName: 'loom.training.log',
      startedAt: new Date('2025-03-03T03:03:03.000Z'),
      summary: { training: { split: 'val', step: 0, metrics: { 'val/reward': 0.5, 'val/reward_std_dev': 0.5 } } },
    })
  })
})
