import { describe, expect, it } from 'vitest'
import { measureWakeLatency, probeCores, summarize } from '../../bench/support/wake-latency.js'

// The gateway bench reports how late the host wakes a sleeping thread; these check the probe's arithmetic and that it
// runs, not how fast this machine is.
describe('wake-latency probe', () => {
  it('summarises lateness by rank', () => {
    const late = Array.from({ length: 100 }, (_, i) => (i + 1) / 100)
    expect(summarize(late.reverse(), 2)).toEqual({
      waits: 100,
      p50: 0.51,
      p99: 1,
      max: 1,
      over500us: 50,
      seconds: 2,
    })
    expect(summarize([], 1).waits).toBe(0)
    expect(summarize([], 1).p99).toBeNaN()
  })

  it('sleeps and measures every wait', () => {
    const seen = measureWakeLatency(0.05)
    expect(seen.waits).toBeGreaterThan(0)
    expect(seen.p50).toBeGreaterThanOrEqual(0)
    expect(seen.max).toBeGreaterThanOrEqual(seen.p99)
    expect(seen.over500us).toBeLessThanOrEqual(seen.waits)
  })

  it('runs pinned on a core in a process of its own', async () => {
    const [core0] = await probeCores([0], 0.05)
    expect(core0?.waits).toBeGreaterThan(0)
    expect(core0?.seconds).toBe(0.05)
  })
})
