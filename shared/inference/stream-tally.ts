import { estimatePromptTokens } from '#shared/inference/usage-meter'
import type { ChatCompletionChunk, ChatCompletionRequest, ChatUsage } from '#shared/schemas/chat-completion'

/** What a finished (or aborted) stream reports to metering and tracing. */
export type StreamOutcome = {
  /** The usage the backend reported, or the best count seen before an abort. */
  usage: Pick<ChatUsage, 'prompt_tokens' | 'completion_tokens' | 'prompt_tokens_details'>
  aborted: boolean
  /** The error sent in-stream, if any. */
  error?: unknown
  /** The chunks' text per choice, assembled (only when collecting). */
  contents?: string[]
  finishReasons?: (string | null)[]
}

/**
 * The usage count of one streamed completion, chunk by chunk. The upstream's final usage chunk wins when it carries
 * both counts; else its continuous per-chunk counts (prompt tokens, completion tokens per choice); else the prompt is
 * estimated and every non-empty content or reasoning delta counts as one token. With `collect`, the text and finish
 * reason of each choice are assembled for the completion's trace.
 */
export class StreamTally {
  /** The latest chunk seen: a usage chunk the gateway writes itself takes its id, created and model. */
  last: ChatCompletionChunk | undefined
  private finalUsage: ChatUsage | undefined
  // Undefined until the backend reports usage (on every chunk with continuous stats, else only at the end).
  private promptTokens: number | undefined
  private readonly perChoice: number[] = []
  private readonly deltas: number[] = []
  private readonly contents: string[] = []
  private readonly finishReasons: (string | null)[] = []

  constructor(
    private readonly request: ChatCompletionRequest,
    private readonly collect: boolean,
  ) {}

  /** Whether the upstream sent its own final usage chunk. */
  get reportedFinalUsage(): boolean {
    return this.finalUsage !== undefined
  }

  /** Counts one chunk as the backend sent it (before framing drops any of its usage). */
  observe(chunk: ChatCompletionChunk): void {
    this.last = chunk
    if (chunk.choices.length === 0 && chunk.usage) {
      this.finalUsage = chunk.usage
      return
    }
    const choice = chunk.choices[0]
    if (chunk.usage && choice !== undefined) {
      this.promptTokens = chunk.usage.prompt_tokens
      this.perChoice[choice.index] = chunk.usage.completion_tokens
    }
    for (const c of chunk.choices) {
      const text = c.delta.content ?? c.delta.reasoning
      if (typeof text === 'string' && text !== '') this.deltas[c.index] = (this.deltas[c.index] ?? 0) + 1
      if (this.collect) {
        if (typeof c.delta.content === 'string') {
          this.contents[c.index] = (this.contents[c.index] ?? '') + c.delta.content
        }
        if (c.finish_reason !== null) this.finishReasons[c.index] = c.finish_reason
      }
    }
  }

  /** The outcome so far: what metering and tracing record when the stream ends or is aborted now. */
  outcome(aborted: boolean, error?: unknown): StreamOutcome {
    const reported = this.finalUsage
    let usage: StreamOutcome['usage']
    if (typeof reported?.prompt_tokens === 'number' && typeof reported.completion_tokens === 'number') {
      usage = reported
    } else {
      const counted = this.perChoice.some((n) => n > 0) ? this.perChoice : this.deltas
      const completion = counted.reduce((a, b) => a + (b ?? 0), 0)
      usage = { prompt_tokens: this.promptTokens ?? estimatePromptTokens(this.request), completion_tokens: completion }
    }
    const result: StreamOutcome = { usage, aborted, error }
    if (this.collect) {
      result.contents = this.contents
      result.finishReasons = this.finishReasons
    }
    return result
  }
}
