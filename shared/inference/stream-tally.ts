import { estimatePromptTokens } from '#shared/inference/usage-meter'
import type { ChatCompletionChunk, ChatCompletionRequest, ChatUsage } from '#shared/schemas/chat-completion'

/** What a streamed choice carried besides its text, assembled as a JSON answer has it (for the trace). */
export type ChoiceExtras = {
  reasoning?: string
  reasoning_content?: string
  tool_calls?: ToolCallDelta[]
  /** `logprobs.content` entries, in order. */
  logprobs?: unknown[]
}

type ToolCallDelta = {
  index?: number
  id?: string
  type?: string
  function?: { name?: string; arguments?: string }
}

/** What a finished (or aborted) stream reports to metering and tracing. */
export type StreamOutcome = {
  /** The usage the backend reported, or the best count seen before an abort. */
  usage: Pick<ChatUsage, 'prompt_tokens' | 'completion_tokens' | 'prompt_tokens_details' | 'completion_tokens_details'>
  aborted: boolean
  /** The error sent in-stream, if any. */
  error?: unknown
  /**
   * True when the stream failed before the upstream sent any chunk: nothing was generated, so nothing is metered (as
   * a JSON completion that fails is not), and the usage is zero.
   */
  unserved?: boolean
  /** The chunks' text per choice, assembled (only when collecting). */
  contents?: string[]
  finishReasons?: (string | null)[]
  /** Per choice, its reasoning, tool calls and logprobs, where it had any (only when collecting). */
  extras?: (ChoiceExtras | undefined)[]
}

// A tool call's deltas merged by their index: the first names it, later ones add to its arguments.
function mergeToolCalls(into: ToolCallDelta[], deltas: ToolCallDelta[]): void {
  for (const delta of deltas) {
    const index = typeof delta.index === 'number' ? delta.index : into.length
    const call = into[index]
    if (call === undefined) {
      // A JSON answer's tool call has no `index`.
      const { index: _index, ...first } = delta
      into[index] = delta.function === undefined ? first : { ...first, function: { ...delta.function } }
      continue
    }
    if (delta.id !== undefined && call.id === undefined) call.id = delta.id
    if (delta.type !== undefined && call.type === undefined) call.type = delta.type
    const fn = delta.function
    if (fn === undefined) continue
    call.function ??= {}
    if (fn.name !== undefined) call.function.name = (call.function.name ?? '') + fn.name
    if (fn.arguments !== undefined) call.function.arguments = (call.function.arguments ?? '') + fn.arguments
  }
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
  private readonly extras: (ChoiceExtras | undefined)[] = []

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
        const d = c.delta as ChatCompletionChunk['choices'][number]['delta'] & { reasoning_content?: string | null }
        if (d.reasoning != null || d.reasoning_content != null || d.tool_calls != null || c.logprobs != null) {
          this.addExtras(c.index, d, c.logprobs)
        }
      }
    }
  }

  private addExtras(
    index: number,
    delta: { reasoning?: string | null; reasoning_content?: string | null; tool_calls?: unknown[] | null },
    logprobs: unknown,
  ): void {
    let extras = this.extras[index]
    if (extras === undefined) {
      extras = {}
      this.extras[index] = extras
    }
    if (typeof delta.reasoning === 'string') extras.reasoning = (extras.reasoning ?? '') + delta.reasoning
    if (typeof delta.reasoning_content === 'string') {
      extras.reasoning_content = (extras.reasoning_content ?? '') + delta.reasoning_content
    }
    if (Array.isArray(delta.tool_calls)) {
      extras.tool_calls ??= []
      mergeToolCalls(extras.tool_calls, delta.tool_calls as ToolCallDelta[])
    }
    const entries = (logprobs as { content?: unknown } | null)?.content
    // Appended in place: a copy per chunk would make a long stream's logprobs quadratic.
    if (Array.isArray(entries)) {
      extras.logprobs ??= []
      for (const entry of entries) extras.logprobs.push(entry)
    }
  }

  /** The outcome so far: what metering and tracing record when the stream ends or is aborted now. */
  outcome(aborted: boolean, error?: unknown): StreamOutcome {
    const reported = this.finalUsage
    let usage: StreamOutcome['usage']
    const unserved = error !== undefined && !aborted && this.last === undefined
    if (unserved) {
      usage = { prompt_tokens: 0, completion_tokens: 0 }
    } else if (typeof reported?.prompt_tokens === 'number' && typeof reported.completion_tokens === 'number') {
      usage = reported
    } else {
      const counted = this.perChoice.some((n) => n > 0) ? this.perChoice : this.deltas
      const completion = counted.reduce((a, b) => a + (b ?? 0), 0)
      usage = { prompt_tokens: this.promptTokens ?? estimatePromptTokens(this.request), completion_tokens: completion }
    }
    const result: StreamOutcome = { usage, aborted, error }
    if (unserved) result.unserved = true
    if (this.collect) {
      result.contents = this.contents
      result.finishReasons = this.finishReasons
      result.extras = this.extras
    }
    return result
  }
}
