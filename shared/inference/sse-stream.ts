import { config } from '#shared/config'
import { inferenceErrorResponse } from '#shared/errors/inference-errors'
import { estimatePromptTokens } from '#shared/inference/usage-meter'
import type { ChatCompletionChunk, ChatCompletionRequest, ChatUsage } from '#shared/schemas/chat-completion'

const encoder = new TextEncoder()
const DONE = encoder.encode('data: [DONE]\n\n')
const HEARTBEAT = encoder.encode(': keep-alive\n\n')

/** What a finished (or aborted) stream reports to metering and tracing. */
export type StreamOutcome = {
  /** The usage the backend reported, or the best count seen before an abort. */
  usage: Pick<ChatUsage, 'prompt_tokens' | 'completion_tokens' | 'prompt_tokens_details'>
  aborted: boolean
  /** The error sent in-stream, if any. */
  error?: unknown
  /** The chunks' text per choice, assembled (only when `collect` is set). */
  contents?: string[]
  finishReasons?: (string | null)[]
}

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

function withoutNulls<T extends object>(value: T): T {
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(value)) if (v !== null && v !== undefined) out[k] = v
  return out as T
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
 * Turns a backend's chunks into the contract's SSE body (§6): usage kept on chunks only with `continuous_usage_stats`,
 * the usage chunk only with `include_usage` (nulls dropped), comment heartbeats until the first chunk, an in-stream
 * error event on failure, and always a final `data: [DONE]`.
 */
export function sseStream(
  iterator: AsyncIterator<ChatCompletionChunk>,
  options: SseOptions,
): ReadableStream<Uint8Array> {
  const includeUsage = options.request.stream_options?.include_usage === true
  const continuous = includeUsage && options.request.stream_options?.continuous_usage_stats === true
  let next: Promise<IteratorResult<ChatCompletionChunk>> | undefined = options.first
  let waiting = options.waiting
  // The caller already waited one interval before committing to a 200, so the first heartbeat goes out at once.
  let heartbeatNow = options.waiting
  let finalUsage: ChatUsage | undefined
  // The latest chunk, whose id, created and model a usage chunk the gateway writes itself takes.
  let last: ChatCompletionChunk | undefined
  // Undefined until the backend reports usage (on every chunk with continuous stats, else only at the end).
  let promptTokens: number | undefined
  const perChoice: number[] = []
  const deltas: number[] = []
  const contents: string[] = []
  const finishReasons: (string | null)[] = []
  let ended = false

  const outcome = (aborted: boolean, error?: unknown): StreamOutcome => {
    const completion = perChoice.some((n) => n > 0)
      ? perChoice.reduce((a, b) => a + (b ?? 0), 0)
      : deltas.reduce((a, b) => a + (b ?? 0), 0)
    // The upstream's final counts when it sent them whole; else its continuous counts, else an estimate.
    const reported = finalUsage
    const usage =
      typeof reported?.prompt_tokens === 'number' && typeof reported.completion_tokens === 'number'
        ? reported
        : { prompt_tokens: promptTokens ?? estimatePromptTokens(options.request), completion_tokens: completion }
    const result: StreamOutcome = { usage, aborted, error }
    if (options.collect) {
      result.contents = contents
      result.finishReasons = finishReasons
    }
    return result
  }

  const shape = (chunk: ChatCompletionChunk): string | undefined => {
    last = chunk
    if (chunk.choices.length === 0 && chunk.usage) {
      finalUsage = chunk.usage
      if (!includeUsage) return undefined
      return `data: ${JSON.stringify(withoutNulls({ ...chunk, usage: withoutNulls(chunk.usage) }))}\n\n`
    }
    const choice = chunk.choices[0]
    // The role chunk carries `prompt_token_ids` (null without `return_token_ids`), whatever the upstream sent (§6.2).
    if (choice?.delta.role !== undefined && chunk.prompt_token_ids === undefined) chunk.prompt_token_ids = null
    if (chunk.usage && choice !== undefined) {
      promptTokens = chunk.usage.prompt_tokens
      perChoice[choice.index] = chunk.usage.completion_tokens
    }
    if (chunk.usage !== undefined && !continuous) delete chunk.usage
    for (const c of chunk.choices) {
      const text = c.delta.content ?? c.delta.reasoning
      if (typeof text === 'string' && text !== '') deltas[c.index] = (deltas[c.index] ?? 0) + 1
      if (options.collect) {
        if (typeof c.delta.content === 'string') contents[c.index] = (contents[c.index] ?? '') + c.delta.content
        if (c.finish_reason !== null) finishReasons[c.index] = c.finish_reason
      }
    }
    return `data: ${JSON.stringify(chunk)}\n\n`
  }

  const end = async (controller: ReadableStreamDefaultController<Uint8Array>, error?: unknown) => {
    ended = true
    if (error !== undefined) {
      const body = inferenceErrorResponse(error).body
      controller.enqueue(encoder.encode(`data: ${JSON.stringify(body)}\n\n`))
    } else if (includeUsage && finalUsage === undefined && last !== undefined) {
      // The client asked for usage and the upstream sent none (a hosted API that ignores `stream_options`): the
      // usage chunk carries what is metered, the upstream's continuous counts or the estimate (§6.2 step 4).
      const { prompt_tokens, completion_tokens } = outcome(false).usage
      const usage = { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens }
      const chunk = { id: last.id, object: last.object, created: last.created, model: last.model, choices: [], usage }
      controller.enqueue(encoder.encode(`data: ${JSON.stringify(chunk)}\n\n`))
    }
    controller.enqueue(DONE)
    await options.onEnd(outcome(false, error))
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
            if (batch !== '') controller.enqueue(encoder.encode(batch))
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
            return controller.enqueue(encoder.encode(batch))
          }
          if (!ready.ok) {
            controller.enqueue(encoder.encode(batch))
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
      await options.onEnd(outcome(true))
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
