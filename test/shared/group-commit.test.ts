import { describe, expect, it } from 'vitest'
import { GroupCommit } from '#shared/group-commit'

/** A write that records its batches and holds each until released, so a test decides when it completes. */
function heldWrites() {
  const batches: number[][] = []
  const releases: ((error?: Error) => void)[] = []
  let inFlight = 0
  let mostInFlight = 0
  const write = (items: number[]) =>
    new Promise<void>((resolve, reject) => {
      batches.push(items)
      inFlight++
      mostInFlight = Math.max(mostInFlight, inFlight)
      releases.push((error) => {
        inFlight--
        if (error === undefined) resolve()
        else reject(error)
      })
    })
  return { write, batches, releases, mostInFlight: () => mostInFlight }
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve))

describe('GroupCommit', () => {
  it('writes a lone item at once, on the next event-loop turn', async () => {
    // Prepare
    const writes = heldWrites()
    const commit = new GroupCommit(writes.write, { maxBatch: 10, maxInFlight: 1 })

    // Act
    const added = commit.add(1)
    await turn()
    writes.releases[0]?.()
    await added

    // Assess
    expect(writes.batches).toEqual([[1]])
  })

  it('writes the items added in one turn together', async () => {
    // Prepare
    const writes = heldWrites()
    const commit = new GroupCommit(writes.write, { maxBatch: 10, maxInFlight: 1 })

    // Act
    const added = [1, 2, 3].map((n) => commit.add(n))
    await turn()
    writes.releases[0]?.()
    await Promise.all(added)

    // Assess
    expect(writes.batches).toEqual([[1, 2, 3]])
  })

  it('gathers the items that wait for a free write into batches of at most maxBatch, maxInFlight writes at once', async () => {
    // Prepare
    const writes = heldWrites()
    const commit = new GroupCommit(writes.write, { maxBatch: 3, maxInFlight: 2 })
    const added: Promise<void>[] = []

    // Act: two writes take the first two items; eight more wait.
    added.push(commit.add(0))
    await turn()
    added.push(commit.add(1))
    await turn()
    for (let n = 2; n < 10; n++) added.push(commit.add(n))
    await turn()
    const whileHeld = writes.batches.length
    for (let released = 0; released < writes.releases.length; released++) {
      writes.releases[released]?.()
      await turn()
      await turn()
    }
    await Promise.all(added)

    // Assess
    expect(whileHeld).toBe(2)
    expect(writes.batches).toEqual([[0], [1], [2, 3, 4], [5, 6, 7], [8, 9]])
    expect(writes.mostInFlight()).toBe(2)
  })

  it('rejects the items of a failed write with its error, and goes on writing the others', async () => {
    // Prepare
    const writes = heldWrites()
    const commit = new GroupCommit(writes.write, { maxBatch: 10, maxInFlight: 1 })
    const failure = new Error('throttled')

    // Act
    const first = [1, 2].map((n) =>
      commit.add(n).then(
        () => 'ok',
        (e: unknown) => e,
      ),
    )
    await turn()
    const second = commit.add(3)
    writes.releases[0]?.(failure)
    await turn()
    await turn()
    writes.releases[1]?.()

    // Assess
    expect(await Promise.all(first)).toEqual([failure, failure])
    await expect(second).resolves.toBeUndefined()
    expect(writes.batches).toEqual([[1, 2], [3]])
  })

  it('refuses a batch size or an in-flight limit below 1', () => {
    // Act / Assess
    const write = async () => undefined
    expect(() => new GroupCommit(write, { maxBatch: 0, maxInFlight: 1 })).toThrow(RangeError)
    expect(() => new GroupCommit(write, { maxBatch: 1, maxInFlight: 0.5 })).toThrow(RangeError)
  })
})
