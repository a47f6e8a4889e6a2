import { createHash } from 'node:crypto'

/** Tokens per cache block, as in vLLM's paged KV cache. */
export const BLOCK_SIZE = 16

/**
 * A prefix cache keyed like vLLM's: each full block of prompt tokens is identified by a hash chained over the
 * `cache_salt` and every earlier block, so a hit means the exact same salted prefix was processed before, and two
 * salts never share an entry. Blocks are evicted least recently used.
 */
export class PrefixCache {
  private readonly blocks = new Map<string, true>()

  constructor(private readonly capacity: number) {}

  /**
   * Returns how many leading prompt tokens were already cached (whole blocks, never the last prompt token, which
   * must be computed to sample) and records the prompt's blocks.
   */
  lookupAndInsert(salt: string | undefined, tokens: readonly number[]): number {
    if (this.capacity === 0) return 0
    const full = Math.floor(tokens.length / BLOCK_SIZE)
    const usable = Math.floor(Math.max(tokens.length - 1, 0) / BLOCK_SIZE)
    let parent = createHash('sha256')
      .update(`salt:${salt ?? ''}`)
      .digest('hex')
    let hits = 0
    let missed = false
    for (let b = 0; b < full; b++) {
      const block = tokens.slice(b * BLOCK_SIZE, (b + 1) * BLOCK_SIZE)
      parent = createHash('sha256').update(parent).update(Int32Array.from(block)).digest('hex')
      if (!missed && b < usable && this.blocks.has(parent)) hits++
      else missed = true
      this.blocks.delete(parent)
      this.blocks.set(parent, true)
    }
    while (this.blocks.size > this.capacity) this.blocks.delete(this.blocks.keys().next().value as string)
    return hits * BLOCK_SIZE
  }
}
