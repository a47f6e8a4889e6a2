import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import {
  addTokens,
  claimSlot,
  countRequest,
  readWindow,
  releaseSlot,
  WINDOW_MS,
  windowOf,
} from '#shared/db/rate-limit-repository'

const scope = () => `TEST#${randomUUID()}`
const LEASE = 60_000

describe('rate windows', () => {
  it('aligns windows to the UTC minute and reports their end', () => {
    // Prepare
    const at = Date.parse('2025-03-04T05:06:45.500Z')

    // Act
    const window = windowOf(at)

    // Assess
    expect(window).toEqual({ id: '2025-03-04T05:06', endsAt: Date.parse('2025-03-04T05:07:00.000Z') })
    expect(windowOf(window.endsAt).id).toBe('2025-03-04T05:07')
    expect(WINDOW_MS).toBe(60_000)
  })

  it('admits exactly rpm of many concurrent requests in one window, and none once the window holds tpm tokens', async () => {
    // Prepare
    const s = scope()
    const window = windowOf(Date.now())

    // Act
    const results = await Promise.all(Array.from({ length: 20 }, () => countRequest(s, window, { rpm: 7 })))
    const counts = await readWindow(s, window)
    const tokenScope = scope()
    await addTokens(tokenScope, window, 40)
    const overTokens = await countRequest(tokenScope, window, { rpm: 100, tpm: 40 })
    const underTokens = await countRequest(tokenScope, window, { rpm: 100, tpm: 41 })

    // Assess
    expect(results.filter((r) => r === undefined)).toHaveLength(7)
    expect(results.filter((r) => r !== undefined).every((r) => r?.requests === 7)).toBe(true)
    expect(counts).toEqual({ requests: 7, tokens: 0 })
    expect(overTokens).toEqual({ requests: 0, tokens: 40 })
    expect(underTokens).toBeUndefined()
  })

  it('starts every window from zero', async () => {
    // Prepare
    const s = scope()
    const now = Date.now()
    await countRequest(s, windowOf(now), { rpm: 1 })

    // Act
    const sameWindow = await countRequest(s, windowOf(now), { rpm: 1 })
    const nextWindow = await countRequest(s, windowOf(now + WINDOW_MS), { rpm: 1 })

    // Assess
    expect(sameWindow).toEqual({ requests: 1, tokens: 0 })
    expect(nextWindow).toBeUndefined()
  })
})

describe('concurrency slots', () => {
  it('grants exactly limit of many simultaneous claims, and a freed slot again', async () => {
    // Prepare
    const s = scope()
    const now = Date.now()

    // Act
    const claims = await Promise.all(Array.from({ length: 10 }, () => claimSlot(s, 3, randomUUID(), now, LEASE)))
    const granted = claims.filter((c) => c !== undefined)
    const whileFull = await claimSlot(s, 3, randomUUID(), now, LEASE)
    await releaseSlot(granted[0] as NonNullable<(typeof granted)[number]>)
    const afterRelease = await claimSlot(s, 3, randomUUID(), now, LEASE)

    // Assess
    expect(granted).toHaveLength(3)
    expect(new Set(granted.map((c) => c?.slot)).size).toBe(3)
    expect(whileFull).toBeUndefined()
    expect(afterRelease?.slot).toBe(granted[0]?.slot)
  })

  it('frees a slot whose lease ran out (a crashed holder) and keeps it from its old holder', async () => {
    // Prepare
    const s = scope()
    const crashedAt = Date.now() - 2 * LEASE
    const crashed = await claimSlot(s, 1, 'crashed-instance', crashedAt, LEASE)

    // Act
    const reclaimed = await claimSlot(s, 1, 'live-instance', Date.now(), LEASE)
    await releaseSlot(crashed as NonNullable<typeof crashed>)
    const stillHeld = await claimSlot(s, 1, 'third-instance', Date.now(), LEASE)

    // Assess
    expect(crashed).toBeDefined()
    expect(reclaimed).toEqual({ scope: s, slot: 0, holder: 'live-instance' })
    expect(stillHeld).toBeUndefined()
  })
})
