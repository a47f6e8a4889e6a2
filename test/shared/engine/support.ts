import { referenceBackend } from '#shared/engine/reference-backend'
import { referenceCatalogModel } from '#shared/engine/settings'
import { Cancellation, type CancelSignal } from '#shared/inference/cancellation'
import type {
  ChatCompletionChunk,
  ChatCompletionRequest,
  ChatCompletionResponse,
} from '#shared/schemas/chat-completion'
import type { CatalogModel } from '#shared/schemas/model'

/** The default reference model, optionally adjusted. */
export function model(overrides: Partial<CatalogModel> = {}): CatalogModel {
  return referenceCatalogModel(overrides)
}

function call(request: ChatCompletionRequest, m: CatalogModel, signal: CancelSignal = new Cancellation()) {
  return { request, model: m, requestId: 'test', created: 1_700_000_000, signal }
}

/** One user turn. */
export function ask(content: string, extra: Partial<ChatCompletionRequest> = {}): ChatCompletionRequest {
  return { messages: [{ role: 'user', content }], ...extra }
}

/** A non-streaming completion from the reference backend. */
export function complete(
  request: ChatCompletionRequest,
  m = model(),
  signal?: CancelSignal,
): Promise<ChatCompletionResponse> {
  return referenceBackend.complete(call(request, m, signal))
}

/** Every chunk of a streaming completion. */
export async function streamAll(request: ChatCompletionRequest, m = model()): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = []
  for await (const chunk of referenceBackend.stream(call(request, m))) chunks.push(chunk)
  return chunks
}

/** The first choice's content. */
export function text(response: ChatCompletionResponse, index = 0): string {
  return response.choices[index]?.message.content ?? ''
}

/** One reported token logprob. */
export type Entry = {
  token: string
  logprob: number
  bytes: number[]
  top_logprobs: { token: string; logprob: number }[]
}

/** The logprob entries of a choice (empty when none were reported). */
export function logprobsOf(response: ChatCompletionResponse, index = 0): Entry[] {
  const logprobs = response.choices[index]?.logprobs as { content: Entry[] } | null | undefined
  return logprobs?.content ?? []
}
