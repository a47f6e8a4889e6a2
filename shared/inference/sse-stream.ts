import { config } from '#shared/config'
import type { ChunkBatch } from '#shared/inference/backend'
import {
  DONE_EVENT,
  encodeEvents,
  errorEvent,
  frameChunk,
  HEARTBEAT_EVENT,
  usageEvent,
} from '#shared/inference/sse-framing'
import { type StreamOutcome, StreamTally } from '#shared/inference/stream-tally'
import type { ChatCompletionChunk, ChatCompletionRequest } from '#shared/schemas/chat-completion'

/** What a backend's stream hands over at a time: one chunk (`stream`), or one upstream read's chunks (`streamBatches`). */
export type StreamItem = ChatCompletionChunk | ChunkBatch

/** Options of one SSE response. */
export type SseOptions = {
  request: ChatCompletionRequest
  /** The first `next()` of the backend's iterator, already started (the caller raced it against the heartbeat). */
  first: Promise<IteratorResult<StreamItem>>
  /** True when no chunk arrived within one heartbeat interval: the stream starts with heartbeats. */
  waiting: boolean
  /** Assemble each choice's text for the outcome (the completion's trace). */
  collect: boolean
  /** Aborts the backend's work when the client goes away. */
  abort: () => void
  /** Runs after `[DONE]` was sent (or the client left), before the stream closes; its errors are the caller's. */
  onEnd: (outcome: StreamOutcome) => Promise<void>
}

/** Events to send at once; `last` when they end the stream (with `[DONE]`). */
export type SsePiece = { text: string; last: boolean }

/**
 * A completion's SSE body as text, piece by piece, whoever writes it (`sseStream` as a ReadableStream, or the Node
 * server's direct writer, shared/http/node-stream.ts). After the `last` piece is written the writer calls `finish()`
 * and closes once it resolves; when the client goes away it calls `cancel()` instead.
 */
export type SseSource = {
  next(): Promise<SsePiece>
  finish(): Promise<void>
  cancel(): Promise<void>
}

// Whether `promise` settles within `ms`: one promise and a timer (a race of two promises with a `finally` costs twice
// as much, once per stream).
function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms)
    const settled = () => {
      clearTimeout(timer)
      resolve(true)
    }
    promise.then(settled, settled)
  })
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

const isBatch = (item: StreamItem): item is ChunkBatch => (item as Partial<ChunkBatch>).json !== undefined

/**
 * Turns a backend's chunks into the contract's SSE body (docs/inference.md §6): usage kept on chunks only with
 * `continuous_usage_stats`, the usage chunk only with `include_usage` (nulls dropped), comment heartbeats until the
 * first chunk, an in-stream error event on failure, and always a final `data: [DONE]`. Chunks that are available
 * together (a batch, or single chunks that follow each other before the next I/O) go out as one piece.
 */
export function sseSource(iterator: AsyncIterator<StreamItem>, options: SseOptions): SseSource {
  const includeUsage = options.request.stream_options?.include_usage === true
  const framing = {
    includeUsage,
    continuous: includeUsage && options.request.stream_options?.continuous_usage_stats === true,
  }
  const tally = new StreamTally(options.request, options.collect)
  let next: Promise<IteratorResult<StreamItem>> | undefined = options.first
  let waiting = options.waiting
  // The caller already waited one interval before committing to a 200, so the first heartbeat goes out at once.
  let heartbeatNow = options.waiting
  let ended = false
  let outcome: StreamOutcome | undefined

  const shape = (item: StreamItem): string => {
    if (!isBatch(item)) {
      tally.observe(item)
      return frameChunk(item, framing) ?? ''
    }
    let text = ''
    for (let i = 0; i < item.chunks.length; i++) {
      const chunk = item.chunks[i] as ChatCompletionChunk
      tally.observe(chunk)
      text += frameChunk(chunk, framing, item.json[i]) ?? ''
    }
    return text
  }

  const end = (batch: string, error?: unknown): SsePiece => {
    ended = true
    let text = batch
    if (error !== undefined) {
      text += errorEvent(error)
    } else if (includeUsage && !tally.reportedFinalUsage && tally.last !== undefined) {
      text += usageEvent(tally.last, tally.outcome(false).usage)
    }
    outcome = tally.outcome(false, error)
    return { text: text + DONE_EVENT, last: true }
  }

  const pieceOf = async (): Promise<SsePiece> => {
    const pending: Promise<IteratorResult<StreamItem>> = next ?? iterator.next()
    next = undefined
    if (heartbeatNow) {
      heartbeatNow = false
      next = pending
      return { text: HEARTBEAT_EVENT, last: false }
    }
    if (waiting && !(await settlesWithin(pending, config.inference.heartbeatMs))) {
      next = pending
      return { text: HEARTBEAT_EVENT, last: false }
    }
    waiting = false
    let result = await pending
    let batch = ''
    try {
      // A piece must hold something, or the stream waits for a read that already happened. Chunks the backend already
      // holds (one upstream read often carries several) are sent in one write: fewer syscalls, same timing.
      for (;;) {
        if (result.done) return end(batch)
        const item = result.value
        batch += shape(item)
        const following = iterator.next()
        if (batch === '') {
          result = await following
          continue
        }
        // A batch is everything its read delivered: the next needs more I/O, unless the upstream has finished and
        // only the end of its body is still to come (usually in the same read).
        if (isBatch(item) && !item.complete) {
          next = following
          return { text: batch, last: false }
        }
        const ready = await soon(following)
        if (ready === undefined) {
          next = following
          return { text: batch, last: false }
        }
        if (!ready.ok) return end(batch, ready.error)
        result = ready.value
      }
    } catch (error) {
      return end(batch, error)
    }
  }

  return {
    async next() {
      try {
        return await pieceOf()
      } catch (error) {
        // The client left meanwhile (cancel() ended the stream): nothing more is written.
        if (ended) return { text: '', last: true }
        return end('', error)
      }
    },
    finish: () => options.onEnd(outcome ?? tally.outcome(false)),
    async cancel() {
      if (ended) return
      ended = true
      options.abort()
      // The pending next() settles once the abort reached the backend; its outcome no longer matters.
      next?.catch(() => undefined)
      await options.onEnd(tally.outcome(true))
      void iterator.return?.()?.catch(() => undefined)
    },
  }
}

/** A source's pieces as a ReadableStream body (Lambda's response stream, `app.request()`). */
export function sseReadable(source: SseSource): ReadableStream<Uint8Array> {
  let cancelled = false
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const piece = await source.next()
      if (cancelled) return
      if (piece.text !== '') controller.enqueue(encodeEvents(piece.text))
      if (!piece.last) return
      // The end work reports its own failures; the stream closes either way.
      await source.finish().catch(() => undefined)
      controller.close()
    },
    cancel() {
      cancelled = true
      return source.cancel()
    },
  })
}

/** `sseSource` as a ReadableStream body. */
export function sseStream(iterator: AsyncIterator<StreamItem>, options: SseOptions): ReadableStream<Uint8Array> {
  return sseReadable(sseSource(iterator, options))
}

/** Starts a stream with a heartbeat right away when the first chunk is late, so proxies keep the connection. */
export function firstWithin(
  iterator: AsyncIterator<StreamItem>,
): Promise<{ first: Promise<IteratorResult<StreamItem>>; settled: boolean }> {
  const first = iterator.next()
  return settlesWithin(first, config.inference.heartbeatMs).then((settled) => ({ first, settled }))
}
