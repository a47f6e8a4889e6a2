import { describe, expect, it } from 'vitest'
import { type ModelUsage, usageTable } from '../../console/src/lib/usage.js'

// Entries as trace/usage answers them with include_costs (shared/tracing/usage.ts): every count and every cost, 0 where
// a model has none.
const entry = (u: Partial<ModelUsage>): ModelUsage => ({
  requests: 1,
  prompt_tokens: 0,
  completion_tokens: 0,
  total_tokens: 0,
  cache_read_input_tokens: 0,
  cache_creation_input_tokens: 0,
  prompt_tokens_total_cost: 0,
  completion_tokens_total_cost: 0,
  cache_read_input_tokens_total_cost: 0,
  cache_creation_input_tokens_total_cost: 0,
  ...u,
})

describe('usageTable', () => {
  it('prices a model by every *_total_cost, cached tokens included, and shows the cache columns it has', () => {
    // Prepare
    const usage = {
      'claude-x': entry({
        prompt_tokens: 100,
        completion_tokens: 20,
        total_tokens: 120,
        cache_read_input_tokens: 3000,
        prompt_tokens_total_cost: 0.1,
        completion_tokens_total_cost: 0.04,
        cache_read_input_tokens_total_cost: 4,
      }),
    }

    // Act
    const table = usageTable(usage)

    // Assess
    expect(table.rows).toHaveLength(1)
    expect(table.rows[0]?.cost).toBeCloseTo(4.14, 12)
    expect(table.rows[0]).toMatchObject({ model: 'claude-x', prompt: 100, completion: 20, cacheRead: 3000, total: 120 })
    expect(table).toMatchObject({ cacheRead: true, cacheCreation: false })
  })

  it('leaves the cache columns out without cached tokens, and has no cost without prices', () => {
    // Act
    const table = usageTable({
      'gpt-x': entry({
        prompt_tokens: 10,
        completion_tokens: 5,
        total_tokens: 15,
        prompt_tokens_total_cost: null,
        completion_tokens_total_cost: null,
        cache_read_input_tokens_total_cost: null,
        cache_creation_input_tokens_total_cost: null,
      }),
    })

    // Assess
    expect(table).toMatchObject({ cacheRead: false, cacheCreation: false })
    expect(table.rows[0]?.cost).toBeNull()
  })

  it('shows cache creation tokens a model was charged for', () => {
    const table = usageTable({ a: entry({}), b: entry({ cache_creation_input_tokens: 500 }) })
    expect(table).toMatchObject({ cacheRead: false, cacheCreation: true })
    expect(table.rows.map((r) => r.cacheCreation)).toEqual([0, 500])
  })
})
