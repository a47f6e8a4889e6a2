import type { RouteDoc } from '#shared/http/openapi'
import { ChatCompletionRequestSchema } from '#shared/schemas/chat-completion'
import { UsageQuerySchema } from '#shared/schemas/usage'

/** OpenAPI descriptions of the inference routes (`/v1/chat/completions`, `/v1/models`, `/v1/usage`). */
export const INFERENCE_DOCS: Record<string, RouteDoc> = {
  'POST /v1/chat/completions': {
    summary: 'Create a chat completion (vLLM/OpenAI-compatible); SSE when `stream` is true',
    body: ChatCompletionRequestSchema,
  },
  'GET /v1/models': { summary: 'List the models the caller may use' },
  'GET /v1/usage': { summary: 'Gateway usage per hour, project and model, with costs', query: UsageQuerySchema },
}
