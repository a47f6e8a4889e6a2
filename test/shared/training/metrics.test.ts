import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { TrajectoryGroup } from '#shared/schemas/trajectory'
import { computeLogMetrics } from '#shared/training/metrics'

const t = (reward: number, metrics: Record<string, number | boolean> = {}) => ({
  messages_and_choices: [],
  reward,
  metrics,
})

describe('computeLogMetrics', () => {
  it('matches the contract worked example', () => {
    // Prepare
    const groups: TrajectoryGroup[] = [
      {
        trajectories: [t(1, { correct: true, duration: 2 }), t(0, { correct: false, duration: 4 })],
        metrics: { judge_score: 0.8 },
      },
      {
        trajectories: [t(0.5, { correct: true })],
        metrics: { judge_score: 0.4 },
        exceptions: [{ type: 'E', message: 'm', traceback: 'tb' }],
      },
    ]

    // Act
    const { metrics, counts } = computeLogMetrics('val', groups)

    // Assess
    expect(counts).toEqual({ group_count: 2, trajectory_count: 3, exception_count: 1 })
    expect(metrics['val/reward']).toBeCloseTo(0.5, 12)
    expect(metrics['val/exception_rate']).toBeCloseTo(0.25, 12)
    expect(metrics['val/correct']).toBeCloseTo(2 / 3, 12)
    expect(metrics['val/duration']).toBeCloseTo(3, 12)
    expect(metrics['val/reward_std_dev']).toBeCloseTo(0.5, 12)
    expect(metrics['val/group_metric_judge_score']).toBeCloseTo(0.6, 12)
  })

  it('drops a mean that overflows to infinity', () => {
    // Act
    const { metrics } = computeLogMetrics('val', [{ trajectories: [t(1, { big: 1e308 }), t(1, { big: 1e308 })] }])

    // Assess
    expect(metrics['val/big']).toBeUndefined()
    expect(metrics['val/reward']).toBe(1)
  })

  it('leaves out reward_std_dev when the standard deviation overflows, and reward when the mean does (QA)', () => {
    // Act: the differences from the mean of [-1e300, 1e300] square to infinity; 1e308 + 1e308 overflows both means.
    const spread = computeLogMetrics('val', [{ trajectories: [t(-1e300), t(1e300)] }]).metrics
    const huge = computeLogMetrics('val', [{ trajectories: [t(1e308), t(1e308)] }]).metrics

    // Assess
    expect(spread).toEqual({ 'val/reward': 0, 'val/exception_rate': 0 })
    expect(huge).toEqual({ 'val/exception_rate': 0 })
  })

  it('keeps reward within the range of the rewards and std dev within half their span (property)', () => {
    const reward = fc.double({ min: -1e6, max: 1e6, noNaN: true })
    const groups = fc.array(
      fc.record({
        trajectories: fc.array(
          reward.map((r) => t(r)),
          { minLength: 1, maxLength: 6 },
        ),
      }),
      { minLength: 1, maxLength: 6 },
    )
    fc.assert(
      fc.property(groups, (gs) => {
        const { metrics } = computeLogMetrics('p', gs)
        const rewards = gs.flatMap((g) => g.trajectories.map((x) => x.reward))
        const [min, max] = [Math.min(...rewards), Math.max(...rewards)]
        const slack = 1e-9 * Math.max(1, Math.abs(min), Math.abs(max))
        expect(metrics['p/reward']).toBeGreaterThanOrEqual(min - slack)
        expect(metrics['p/reward']).toBeLessThanOrEqual(max + slack)
        expect(metrics['p/reward_std_dev']).toBeGreaterThanOrEqual(0)
        expect(metrics['p/reward_std_dev']).toBeLessThanOrEqual((max - min) / 2 + slack)
        expect(metrics['p/exception_rate']).toBe(0)
      }),
    )
  })
})
