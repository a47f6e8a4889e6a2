import { describe, expect, it } from 'vitest'
import { TRAINING_LOG_OP, trainingLogCall } from '#shared/training/log-trace'
import type { LogOutcome } from '#shared/training/log-trajectories'

describe('trainingLogCall', () => {
  it("describes a log call as a finished call in the model's project", () => {
    // Prepare
    const outcome: LogOutcome = {
      model: {
        id: 'm1',
        entity: 'acme',
        project: 'rl',
        name: 'agent',
        base_model: 'Qwen/Qwen2.5-7B-Instruct',
        run_id: null,
        created_at: '2025-01-01T00:00:00.000Z',
        step: 3,
      },
      response: {
        log_id: '0190c0de-0000-7000-8000-000000000000',
        model_id: 'm1',
        split: 'val',
        step: 3,
        recorded_at: '2025-01-01T00:00:01.000Z',
        metrics: { 'val/reward': 0.5, 'val/reward_std_dev': 0 },
        group_count: 1,
        trajectory_count: 2,
        exception_count: 0,
      },
      replayed: false,
      startedAt: new Date('2025-01-01T00:00:00.900Z'),
      endedAt: new Date('2025-01-01T00:00:01.100Z'),
    }

    // Act
    const call = trainingLogCall(outcome, 'user-1')
    const retimed = trainingLogCall(outcome, 'user-1', { startedAt: new Date(0), endedAt: new Date(1) })

    // Assess
    expect(call).toMatchObject({
      projectId: 'acme/rl',
      id: outcome.response.log_id,
      opName: TRAINING_LOG_OP,
      userId: 'user-1',
      startedAt: new Date('2025-01-01T00:00:00.900Z'),
      endedAt: new Date('2025-01-01T00:00:01.100Z'),
      inputs: { model_id: 'm1', split: 'val', group_count: 1, trajectory_count: 2, exception_count: 0 },
      output: outcome.response,
      summary: { training: { split: 'val', step: 3, metrics: { 'val/reward': 0.5, 'val/reward_std_dev': 0 } } },
    })
    expect(TRAINING_LOG_OP).toBe('loom.training.log')
    expect([retimed.startedAt, retimed.endedAt]).toEqual([new Date(0), new Date(1)])
  })
})
