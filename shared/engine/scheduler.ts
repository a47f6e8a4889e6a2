import { ServiceUnavailableError } from '#shared/errors/http-error'
import type { CancelSignal } from '#shared/inference/cancellation'

type Waiter = { priority: number; arrival: number; grant: () => void; reject: (error: Error) => void }

/**
 * Per-model admission: at most `limit` requests generate at once; the rest wait in a queue served first come first
 * served, or by `priority` (lower value first, then arrival) when the model uses priority scheduling.
 */
export class Scheduler {
  private running = 0
  private arrivals = 0
  private readonly queue: Waiter[] = []

  constructor(
    private readonly limit: number,
    private readonly policy: 'fcfs' | 'priority',
  ) {}

  /** Requests generating now. */
  get active(): number {
    return this.running
  }

  /** Requests waiting for a slot. */
  get waiting(): number {
    return this.queue.length
  }

  /** Waits for a slot and returns its release function; an abort while queued removes the request. */
  acquire(priority: number, signal?: CancelSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(new ServiceUnavailableError('Request aborted before scheduling'))
    return new Promise((resolve, reject) => {
      let released = false
      const release = () => {
        if (released) return
        released = true
        this.running--
        this.pump()
      }
      const waiter: Waiter = {
        priority: this.policy === 'priority' ? priority : 0,
        arrival: this.arrivals++,
        grant: () => {
          stopWatching?.()
          this.running++
          resolve(release)
        },
        reject,
      }
      const onAbort = () => {
        const at = this.queue.indexOf(waiter)
        if (at >= 0) {
          this.queue.splice(at, 1)
          reject(new ServiceUnavailableError('Request aborted while queued'))
        }
      }
      const stopWatching = signal?.onAbort(onAbort)
      this.queue.push(waiter)
      this.queue.sort((a, b) => a.priority - b.priority || a.arrival - b.arrival)
      this.pump()
    })
  }

  private pump(): void {
    while (this.running < this.limit && this.queue.length > 0) (this.queue.shift() as Waiter).grant()
  }
}
