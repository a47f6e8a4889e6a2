import { describe, expect, it } from 'vitest'
import { RefreshingCache } from '#shared/refreshing-cache'

const TTL = 1_000

function newCache(maxEntries = 10) {
  return new RefreshingCache<string>({ name: 'test', ttlMs: () => TTL, maxEntries: () => maxEntries })
}

// A load that counts its calls and resolves only when told to.
// A load that counts its calls, records whether each ran as a background refresh, and resolves only when told to.
function deferredLoads() {
  const pending: ((value: string) => void)[] = []
  const background: boolean[] = []
  let calls = 0
  const load = (inBackground: boolean) =>
    new Promise<string>((resolve) => {
      calls++
      background.push(inBackground)
      pending.push(resolve)
    })
  return { load, calls: () => calls, background, resolve: (value: string) => pending.shift()?.(value) }
}

// A cache holding `value` under 'k', loaded at time 0, and its loads.
async function holding(value: string) {
  const cache = newCache()
  const loads = deferredLoads()
  const first = cache.get('k', loads.load, 0)
  loads.resolve(value)
  await first
  return { cache, loads }
}

describe('RefreshingCache', () => {
  it('peeks a fresh value without a promise, and a missing or expired one as the load', async () => {
    // Prepare
    const cache = newCache()
    const loads = deferredLoads()

    // Act
    const missing = cache.peek('k', loads.load, 0)
    loads.resolve('v1')
    const loaded = await missing
    const fresh = cache.peek('k', loads.load, 100)
    const expired = cache.peek('k', loads.load, TTL + 1)
    loads.resolve('v2')

    // Assess
    expect(missing).toBeInstanceOf(Promise)
    expect(loaded).toBe('v1')
    expect(fresh).toBe('v1')
    expect(expired).toBeInstanceOf(Promise)
    expect(await expired).toBe('v2')
    expect(loads.calls()).toBe(2)
  })

  it('tells a load whether it is a background refresh: misses and expired entries are not, the last quarter is', async () => {
    // Prepare
    const { cache, loads } = await holding('v1')

    // Act
    const refreshing = cache.peek('k', loads.load, TTL - 1)
    loads.resolve('v2')
    await new Promise((resolve) => setImmediate(resolve))
    const expired = cache.peek('k', loads.load, 10 * TTL)
    loads.resolve('v3')

    // Assess
    expect(refreshing).toBe('v1')
    expect(await expired).toBe('v3')
    expect(loads.background).toEqual([false, true, false])
  })

  it('shares one load between concurrent misses', async () => {
    // Prepare
    const cache = newCache()
    const loads = deferredLoads()

    // Act
    const first = cache.get('k', loads.load, 0)
    const second = cache.get('k', loads.load, 0)
    loads.resolve('v1')

    // Assess
    expect(await Promise.all([first, second])).toEqual(['v1', 'v1'])
    expect(loads.calls()).toBe(1)
  })

  it('serves the cached value while refreshing it in the last quarter of its life, then the new one', async () => {
    // Prepare
    const cache = newCache()
    let version = 0
    const load = async () => `v${++version}`
    await cache.get('k', load, 0)

    // Act
    const early = await cache.get('k', load, 500)
    const late = await cache.get('k', load, 800)
    await new Promise((resolve) => setImmediate(resolve))
    const refreshed = await cache.get('k', load, 900)

    // Assess: the refresh started at 800 did not hold that request; its value is served afterwards.
    expect([early, late, refreshed]).toEqual(['v1', 'v1', 'v2'])
    expect(version).toBe(2)
  })

  it('never serves an entry past its expiry', async () => {
    // Prepare
    const { cache, loads } = await holding('old')

    // Act
    const expired = cache.get('k', loads.load, TTL)
    loads.resolve('new')

    // Assess
    expect(await expired).toBe('new')
  })

  it('does not put back what was cleared while a load was running', async () => {
    // Prepare
    const cache = newCache()
    const loads = deferredLoads()
    const running = cache.get('k', loads.load, 0)

    // Act
    cache.clear()
    loads.resolve('before clear')
    await running
    const after = cache.get('k', loads.load, 1)
    loads.resolve('after clear')

    // Assess
    expect(await after).toBe('after clear')
    expect(loads.calls()).toBe(2)
  })

  it('keeps serving the cached value when a background refresh fails, and caches no failed load', async () => {
    // Prepare
    const cache = newCache()
    await cache.get('k', async () => 'good', 0)
    const failing = async (): Promise<string> => {
      throw new Error('store unavailable')
    }

    // Act
    const during = await cache.get('k', failing, 900)
    await new Promise((resolve) => setImmediate(resolve))
    const stillCached = await cache.get('k', failing, 950)
    const afterExpiry = cache.get('k', failing, TTL + 1)

    // Assess
    expect([during, stillCached]).toEqual(['good', 'good'])
    await expect(afterExpiry).rejects.toThrow('store unavailable')
    expect(await cache.get('k', async () => 'recovered', TTL + 2)).toBe('recovered')
  })

  it('evicts the oldest entry beyond its bound', async () => {
    // Prepare
    const cache = newCache(2)
    let loads = 0
    const load = async () => `v${++loads}`

    // Act
    await cache.get('a', load, 0)
    await cache.get('b', load, 0)
    await cache.get('c', load, 0)
    const b = await cache.get('b', load, 1)
    const a = await cache.get('a', load, 1)

    // Assess: b was still cached, a had been evicted and was loaded again.
    expect(b).toBe('v2')
    expect(a).toBe('v4')
  })
})
