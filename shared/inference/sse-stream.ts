import { config } from '#shared/config'
import { DONE, encodeEvents, errorEvent, frameChunk, HEARTBEAT, usageEvent } from '#shared/inference/sse-framing'
import { type StreamOutcome, StreamTally } from '#shared/inference/stream-tally'
import type { ChatCompletionChunk, ChatCompletionRequest } from '#shared/schemas/chat-completion'

/** Options of one SSE response. */
export type SseOptions = {
  request: ChatCompletionRequest
  /** The first `next()` of the backend's iterator, already started (the caller raced it against the heartbeat). */
  first: Promise<IteratorResult<ChatCompletionChunk>>
  /** True when no chunk arrived within one heartbeat interval: the stream starts with heartbeats. */
  waiting: boolean
  collect: boolean
  /** Aborts the backend's work when the client goes away. */
  abort: () => void
  /** Runs after `[DONE]` was enqueued (or the client left), before the stream closes; its errors are the caller's. */
  onEnd: (outcome: StreamOutcome) => Promise<void>
}

function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms)
  })
  const settled = promise.then(
    () => true,
    () => true,
  )
  return Promise.race([settled, timeout]).finally(() => clearTimeout(timer))
}

type Settled<T> = { ok: true; value: T } | { ok: false; error: unknown }

// Whether `promise` settles before the event loop's next check phase: the chunks an upstream read delivered are all
// handed over by then (microtasks only), while a chunk still being generated needs more I/O. Tells "available now"
// from "still being generated" without a timer.
function soon<T>(promise: Promise<T>): Promise<Settled<T> | undefined> {
  return new Promise((resolve) => {
    const immediate = setImmediate(() => resolve(undefined))
    promise.then(
      (value) => {
        clearImmediate(immediate)
        resolve({ ok: true, value })
      },
      (error: unknown) => {
        clearImmediate(immediate)
        resolve({ ok: false, error })
      },
    )
  })
}

/**
 * Turns a backend's chunks into the contract's SSE body (docs/inference.md §6): usage kept on chunks only with
 * `continuous_usage_stats`, the usage chunk only with `include_usage` (nulls dropped), comment heartbeats until the
 * first chunk, an in-stream error event on failure, and always a final `data: [DONE]`.
 */
export function sseStream(
  iterator: AsyncIterator<ChatCompletionChunk>,
  options: SseOptions,
): ReadableStream<Uint8Array> {
  const includeUsage = options.request.stream_options?.include_usage === true
  const framing = {
    includeUsage,
    continuous: includeUsage && options.request.stream_options?.continuous_usage_stats === true,
  }
  const tally = new StreamTally(options.request, options.collect)
  let next: Promise<IteratorResult<ChatCompletionChunk>> | undefined = options.first
  let waiting = options.waiting
  // The caller already waited one interval before committing to a 200, so the first heartbeat goes out at once.
  let heartbeatNow = options.waiting
  let ended = false

  const shape = (chunk: ChatCompletionChunk): string | undefined => {
    tally.observe(chunk)
    return frameChunk(chunk, framing)
  }

  const end = async (controller: ReadableStreamDefaultController<Uint8Array>, error?: unknown) => {
    ended = true
    if (error !== undefined) {
      controller.enqueue(encodeEvents(errorEvent(error)))
    } else if (includeUsage && !tally.reportedFinalUsage && tally.last !== undefined) {
      controller.enqueue(encodeEvents(usageEvent(tally.last, tally.outcome(false).usage)))
    }
    controller.enqueue(DONE)
    await options.onEnd(tally.outcome(false, error))
    controller.close()
  }

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const pending: Promise<IteratorResult<ChatCompletionChunk>> = next ?? iterator.next()
        next = undefined
        if (heartbeatNow) {
          heartbeatNow = false
          next = pending
          controller.enqueue(HEARTBEAT)
          return
        }
        if (waiting && !(await settlesWithin(pending, config.inference.heartbeatMs))) {
          next = pending
          controller.enqueue(HEARTBEAT)
          return
        }
        waiting = false
        let result = await pending
        let batch = ''
        // A pull must enqueue something, or the stream waits for a read that already happened. Chunks the backend
        // already holds (one upstream read often carries several) are sent in one write: fewer syscalls, same timing.
        for (;;) {
          if (result.done) {
            if (batch !== '') controller.enqueue(encodeEvents(batch))
            return await end(controller)
          }
          batch += shape(result.value) ?? ''
          const following = iterator.next()
          if (batch === '') {
            result = await following
            continue
          }
          const ready = await soon(following)
          if (ready === undefined) {
            next = following
            return controller.enqueue(encodeEvents(batch))
          }
          if (!ready.ok) {
            controller.enqueue(encodeEvents(batch))
            return await end(controller, ready.error)
          }
          result = ready.value
        }
      } catch (error) {
        if (!ended) await end(controller, error)
      }
    },
    async cancel() {
      if (ended) return
      ended = true
      options.abort()
      // The pending next() settles once the abort reached the backend; its outcome no longer matters.
      next?.catch(() => undefined)
      await options.onEnd(tally.outcome(true))
      void iterator.return?.()?.catch(() => undefined)
    },
  })
}

/** Starts a stream with a heartbeat right away when the first chunk is late, so proxies keep the connection. */
export function firstWithin(
  iterator: AsyncIterator<ChatCompletionChunk>,
): Promise<{ first: Promise<IteratorResult<ChatCompletionChunk>>; settled: boolean }> {
  const first = iterator.next()
  return settlesWithin(first, config.inference.heartbeatMs).then((settled) => ({ first, settled }))
}
