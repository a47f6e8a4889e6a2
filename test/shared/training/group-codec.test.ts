import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { CHUNK_BYTES, decodeGroup, encodeGroup } from '#shared/training/group-codec'

describe('encodeGroup / decodeGroup', () => {
  it('round-trips text byte for byte, including non-ASCII characters', () => {
    // Prepare
    const json = JSON.stringify({ trajectories: [{ content: 'naïve – 日本語 🚀', reward: 0.5 }] })

    // Act
    const chunks = encodeGroup(json)

    // Assess
    expect(chunks).toHaveLength(1)
    expect(decodeGroup(chunks)).toBe(json)
  })

  it('splits an incompressible payload into chunks no larger than the chunk size', () => {
    // Prepare
    const json = JSON.stringify({ blob: randomBytes(1_000_000).toString('base64') })

    // Act
    const chunks = encodeGroup(json)

    // Assess
    expect(chunks.length).toBe(Math.ceil(chunks.reduce((n, c) => n + c.length, 0) / CHUNK_BYTES))
    expect(chunks.length).toBeGreaterThanOrEqual(3)
    expect(chunks.every((c) => c.length <= CHUNK_BYTES)).toBe(true)
    expect(decodeGroup(chunks)).toBe(json)
  })

  it('compresses repetitive trajectories several-fold', () => {
    // Prepare
    const json = JSON.stringify(
      Array.from({ length: 200 }, (_, i) => ({ role: 'system', content: `You are agent ${i}.` })),
    )

    // Act
    const size = encodeGroup(json).reduce((n, c) => n + c.length, 0)

    // Assess
    expect(size * 4).toBeLessThan(Buffer.byteLength(json))
  })
})
