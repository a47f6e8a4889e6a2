import { describe, expect, it } from 'vitest'
import { uuidv7 } from '#shared/tracing/ids'

const UUIDV7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe('uuidv7', () => {
  it('puts the 48-bit millisecond time first, big-endian, then the version and variant bits', () => {
    // Act
    const ids = [0, 1, 0xff, 2 ** 32 - 1, 2 ** 32, 2 ** 40 + 12_345, 1_764_201_600_000, 2 ** 48 - 1].map((t) => [
      t,
      uuidv7(t),
    ])

    // Assess
    for (const [t, id] of ids) {
      expect(id).toMatch(UUIDV7)
      expect(String(id).replace('-', '').slice(0, 12)).toBe(Number(t).toString(16).padStart(12, '0'))
    }
  })

  it('draws fresh random bits for every id, also across its entropy pool refills', () => {
    // Act: 1,000 ids at one instant span several 256-id pools.
    const ids = Array.from({ length: 1_000 }, () => uuidv7(1_764_201_600_000))

    // Assess
    expect(new Set(ids).size).toBe(ids.length)
    expect(new Set(ids.map((id) => id.slice(15))).size).toBe(ids.length)
    for (const id of ids) expect(id).toMatch(UUIDV7)
  })

  it('sorts by time', () => {
    // Act
    const earlier = uuidv7(1_764_201_600_000)
    const later = uuidv7(1_764_201_600_001)

    // Assess
    expect(earlier < later).toBe(true)
  })
})
