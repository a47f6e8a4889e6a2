import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { addUsage, listUsage, type UsageDelta } from '#shared/db/usage-repository'

function delta(entity: string, overrides: Partial<UsageDelta> = {}): UsageDelta {
  return {
    entity,
    project: 'proj',
    model: 'org/model',
    hour: '2026-11-22T00',
    requests: 1,
    abortedRequests: 0,
    promptTokens: 10,
    completionTokens: 5,
    cachedTokens: 2,
    costUsd: 0.5,
    ...overrides,
  }
}

describe('usage repository', () => {
  it('adds deltas to an hourly counter and counts a retried flush once', async () => {
    // Prepare
    const entity = `e-${randomUUID().slice(0, 8)}`

    // Act
    await addUsage(delta(entity), 0, { writer: 'w1', seq: 1 })
    await addUsage(delta(entity), 0, { writer: 'w1', seq: 1 })
    await addUsage(delta(entity, { requests: 2, promptTokens: 1 }), 0, { writer: 'w1', seq: 2 })

    // Assess
    const [counter, ...rest] = await listUsage(entity, '2026-11-22T00', '2026-11-22T00')
    expect(rest).toEqual([])
    expect(counter).toMatchObject({ requests: 3, promptTokens: 11, completionTokens: 10, cachedTokens: 4, costUsd: 1 })
  })

  it('refuses a retried flush even after other flushes landed on the counter in between', async () => {
    // Prepare: w1's flush 1 is applied (its answer lost), then w2 and w1's own next flush land on the same counter.
    const entity = `e-${randomUUID().slice(0, 8)}`
    await addUsage(delta(entity), 0, { writer: 'w1', seq: 1 })
    await addUsage(delta(entity), 0, { writer: 'w2', seq: 7 })

    // Act: both retry, then w1 writes a newer flush and an SDK attempt of its flush 1 arrives late.
    await addUsage(delta(entity), 0, { writer: 'w1', seq: 1 })
    await addUsage(delta(entity), 0, { writer: 'w2', seq: 7 })
    await addUsage(delta(entity), 0, { writer: 'w1', seq: 2 })
    await addUsage(delta(entity), 0, { writer: 'w1', seq: 1 })

    // Assess
    const counters = await listUsage(entity, '2026-11-22T00', '2026-11-22T00')
    expect(counters).toHaveLength(1)
    expect(counters[0]).toMatchObject({ requests: 3, promptTokens: 30 })
  })

  it('keeps shards apart, filters by hour range and project, and never shows another entity', async () => {
    // Prepare
    const entity = `e-${randomUUID().slice(0, 8)}`
    await addUsage(delta(entity), 0, { writer: 'w1', seq: 1 })
    await addUsage(delta(entity), 1, { writer: 'w1', seq: 2 })
    await addUsage(delta(entity, { hour: '2026-11-22T05' }), 0, { writer: 'w1', seq: 3 })
    await addUsage(delta(entity, { project: 'other' }), 0, { writer: 'w1', seq: 4 })
    await addUsage(delta(`x-${entity}`), 0, { writer: 'w1', seq: 5 })

    // Act
    const early = await listUsage(entity, '2026-11-22T00', '2026-11-22T04', 'proj')
    const all = await listUsage(entity, '2026-11-21T00', '2026-11-23T00')

    // Assess
    expect(early.map((c) => c.shard).sort()).toEqual([0, 1])
    expect(all).toHaveLength(4)
    expect(all.every((c) => c.entity === entity)).toBe(true)
  })
})
