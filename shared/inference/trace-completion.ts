import { logger } from '#shared/logger'
import type { Principal } from '#shared/schemas/api-key'
import type { ChatCompletionRequest, ChatUsage } from '#shared/schemas/chat-completion'
import type { CatalogModel } from '#shared/schemas/model'

/** The op name gateway completions are recorded under in the caller's project. */
export const TRACE_OP_NAME = 'loom.chat.completions'

/** One completion to record as a call. */
export type CompletionTrace = {
  principal: Principal
  projectId: string
  model: CatalogModel
  request: ChatCompletionRequest
  /** The response body (non-streaming) or the stream assembled into the same shape. */
  output: unknown
  usage: Pick<ChatUsage, 'prompt_tokens' | 'completion_tokens'>
  startedAt: Date
  endedAt: Date
  /** Why the completion did not finish normally (aborted, in-stream error). */
  exception?: string
}

/** Whether a request opted out of tracing with `Loom-Trace: off`. */
export function traceOptedOut(header: string | undefined): boolean {
  return header !== undefined && ['off', 'false', '0', 'no'].includes(header.trim().toLowerCase())
}

/**
 * Records a completion as a call in the caller's project (op `loom.chat.completions`, inputs = request, output =
 * response, `summary.usage` keyed by model id as Weave expects), so `trace/usage`, costs and feedback work on gateway
 * traffic. Never throws: tracing must not fail a completion. The tracing module loads on first use, keeping it out of
 * the chat function's cold start.
 */
export async function traceCompletion(trace: CompletionTrace): Promise<void> {
  try {
    const [{ recordCall }, { uuidv7 }] = await Promise.all([
      import('#shared/tracing/record-call'),
      import('#shared/tracing/ids'),
    ])
    const { prompt_tokens, completion_tokens } = trace.usage
    await recordCall({
      id: uuidv7(trace.startedAt.getTime()),
      projectId: trace.projectId,
      opName: TRACE_OP_NAME,
      inputs: trace.request as Record<string, unknown>,
      output: trace.output,
      summary: {
        usage: {
          [trace.model.id]: {
            prompt_tokens,
            completion_tokens,
            total_tokens: prompt_tokens + completion_tokens,
            requests: 1,
          },
        },
      },
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
