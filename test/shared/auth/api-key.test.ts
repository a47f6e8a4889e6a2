import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { hashApiKey } from '#shared/auth/api-key'

describe('hashApiKey', () => {
  it('is the hex SHA-256 of the key, for ASCII and non-ASCII keys', () => {
    for (const key of ['loom_abc', 'abc', 'ключ-🔑', '']) {
      // Act
      const digest = hashApiKey(key)

      // Assess
      expect(digest).toBe(createHash('sha256').update(key, 'utf8').digest('hex'))
    }
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  })
})
