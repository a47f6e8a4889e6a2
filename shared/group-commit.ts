type Waiting<T> = { item: T; resolve: () => void; reject: (error: unknown) => void }

/** How a `GroupCommit` batches: at most `maxBatch` items per write, at most `maxInFlight` writes at once. */
export type GroupCommitOptions = { maxBatch: number; maxInFlight: number }

/**
 * Group commit: items are written in batches, at most `maxInFlight` writes at a time. Items added while every write
 * slot is taken wait and go out together in the next write (up to `maxBatch` each), so a lone item is written at once
 * and a burst costs a write per batch rather than one per item. A write starts on the event-loop turn after the first
 * item that needs it, so items added in the same turn share it. Each `add` resolves once the write holding its item
 * has succeeded, and rejects with that write's error.
 */
export class GroupCommit<T> {
  readonly #write: (items: T[]) => Promise<void>
  readonly #maxBatch: number
  readonly #maxInFlight: number
  readonly #queue: Waiting<T>[] = []
  #inFlight = 0
  #scheduled = false

  constructor(write: (items: T[]) => Promise<void>, { maxBatch, maxInFlight }: GroupCommitOptions) {
    for (const [name, value] of [
      ['maxBatch', maxBatch],
      ['maxInFlight', maxInFlight],
    ] as const) {
      if (!(Number.isSafeInteger(value) && value >= 1))
        throw new RangeError(`${name} must be an integer ≥ 1, not ${value}`)
    }
    this.#write = write
    this.#maxBatch = maxBatch
    this.#maxInFlight = maxInFlight
  }

  /** Queues `item` for a write; resolves once it is written. */
  add(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject })
      this.#schedule()
    })
  }

  #schedule(): void {
    if (this.#scheduled || this.#inFlight >= this.#maxInFlight || this.#queue.length === 0) return
    this.#scheduled = true
    setImmediate(() => {
      this.#scheduled = false
      while (this.#inFlight < this.#maxInFlight && this.#queue.length > 0) {
        void this.#run(this.#queue.splice(0, this.#maxBatch))
      }
    })
  }

  async #run(batch: Waiting<T>[]): Promise<void> {
    this.#inFlight++
    try {
      await this.#write(batch.map((w) => w.item))
      for (const w of batch) w.resolve()
    } catch (error) {
      for (const w of batch) w.reject(error)
    } finally {
      this.#inFlight--
      this.#schedule()
    }
  }
}
