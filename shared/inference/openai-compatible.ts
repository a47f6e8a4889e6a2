import { NotImplementedError } from '#shared/errors/http-error'
import type { ChatBackend } from '#shared/inference/backend'

/** Forwards completions to an upstream OpenAI-compatible server (work in progress). */
export const openAiCompatibleBackend: ChatBackend = {
  async complete() {
    throw new NotImplementedError('The openai-compatible backend is not implemented yet')
  },
  // biome-ignore lint/correctness/useYield: placeholder until the streaming proxy lands
  async *stream() {
    throw new NotImplementedError('The openai-compatible backend is not implemented yet')
  },
}
