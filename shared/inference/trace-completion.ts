import { GroupCommit } from '#shared/group-commit'
import { TRACE_OP_NAME } from '#shared/inference/trace-op'
import { logger } from '#shared/logger'
import type { Principal } from '#shared/schemas/api-key'
import type { ChatCompletionRequest, ChatUsage } from '#shared/schemas/chat-completion'
import type { CatalogModel } from '#shared/schemas/model'
import type { RecordCallInput, RecordedUsage } from '#shared/tracing/record-call'

export { TRACE_OP_NAME }

/** One completion to record as a call. */
export type CompletionTrace = {
  principal: Principal
  projectId: string
  model: CatalogModel
  request: ChatCompletionRequest
  /** The response body (non-streaming) or the stream assembled into the same shape. */
  output: unknown
  /**
   * The usage the completion was metered with; undefined when it was not metered (it failed before the backend
   * generated anything), and then the call has no `summary.usage`, so `trace/usage` counts what `/v1/usage` counts.
   */
  usage:
    | Pick<ChatUsage, 'prompt_tokens' | 'completion_tokens' | 'prompt_tokens_details' | 'completion_tokens_details'>
    | undefined
  startedAt: Date
  endedAt: Date
  /** Why the completion did not finish normally (aborted, upstream or engine error). */
  exception?: string
}

/** Whether a request opted out of tracing with `Loom-Trace: off`. */
export function traceOptedOut(header: string | undefined): boolean {
  return header !== undefined && ['off', 'false', '0', 'no'].includes(header.trim().toLowerCase())
}

/**
 * A completion's usage as the call's `summary.usage` keeps it for its model: the counts, `requests: 1`, the upstream's
 * `completion_tokens_details` (a hosted API's reasoning tokens) as it sent them, and, when the usage has
 * `prompt_tokens_details`, those details with their `cached_tokens` also as `cache_read_input_tokens`: that is the key
 * the trace store's costs and `trace/usage` read cached input from (tracing.md §7.5), and the summary Weave's OpenAI
 * integration records. Cached tokens are then priced at the cache-read rate, as the meter prices them.
 */
export function summaryUsage(usage: NonNullable<CompletionTrace['usage']>): RecordedUsage {
  const { prompt_tokens, completion_tokens } = usage
  const recorded: RecordedUsage = {
    prompt_tokens,
    completion_tokens,
    total_tokens: prompt_tokens + completion_tokens,
    requests: 1,
  }
  const details = usage.prompt_tokens_details
  if (details != null) {
    recorded.prompt_tokens_details = details
    if (typeof details.cached_tokens === 'number') recorded.cache_read_input_tokens = details.cached_tokens
  }
  if (usage.completion_tokens_details != null) recorded.completion_tokens_details = usage.completion_tokens_details
  return recorded
}

// Completions traced in one write at most (one call ingest of this many calls stays well inside DynamoDB's request
// limits; OTel exports ingest 1,000 spans at once), and writes in flight at once.
const TRACE_BATCHING = { maxBatch: 100, maxInFlight: 2 }

/**
 * Writes a batch of completion traces: together first, and if that fails, each alone, so that one trace the store
 * refuses (too large, say) costs no other trace its record. A trace that fails alone is logged.
 */
async function writeTraces(inputs: RecordCallInput[]): Promise<void> {
  const { recordCalls } = await import('#shared/tracing/record-call')
  try {
    await recordCalls(inputs)
  } catch (error) {
    if (inputs.length === 1) throw error
    await Promise.all(
      inputs.map((input) =>
        recordCalls([input]).catch((e: unknown) => logger.warn('tracing a completion failed', { error: e })),
      ),
    )
  }
}

// Traces of completions that end while a write is in flight go out together in the next one (group commit): a lone
// completion is written at once, a busy server writes a batch per round trip instead of a call ingest (five DynamoDB
// requests) per completion. In Lambda each invocation waits for its own trace (`afterResponse`), a batch of one.
const traces = new GroupCommit(writeTraces, TRACE_BATCHING)

/**
 * Records a completion as a call in the caller's project (op `loom.chat.completions`, inputs = request, output =
 * response, `summary.usage` keyed by model id as Weave expects: `summaryUsage`, left out for a call that was not
 * metered), so `trace/usage`, costs and feedback work on gateway traffic; resolves once it is stored, together with the other completions that ended meanwhile.
 * Never throws: tracing must not fail a completion. The tracing module loads on first use, keeping it out of the chat
 * function's cold start.
 */
export async function traceCompletion(trace: CompletionTrace): Promise<void> {
  try {
    const { uuidv7 } = await import('#shared/tracing/ids')
    await traces.add({
      id: uuidv7(trace.startedAt.getTime()),
      projectId: trace.projectId,
      opName: TRACE_OP_NAME,
      inputs: trace.request as Record<string, unknown>,
      output: trace.output,
      summary: trace.usage === undefined ? {} : { usage: { [trace.model.id]: summaryUsage(trace.usage) } },
      startedAt: trace.startedAt,
      endedAt: trace.endedAt,
      userId: trace.principal.userId,
      entities: trace.principal.entities,
      ...(trace.exception === undefined ? {} : { exception: trace.exception }),
    })
  } catch (error) {
    logger.warn('tracing a completion failed', { error })
  }
}
