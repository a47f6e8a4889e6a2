import { z } from 'zod/mini'
import type { RouteDoc } from '#shared/http/openapi'
import { ChatCompletionRequestSchema } from '#shared/schemas/chat-completion'
import { UsageQuerySchema } from '#shared/schemas/usage'

/**
 * The OpenAPI description of every route, keyed by `"<METHOD> <path>"` as in `functions/manifest.ts`, pointing at
 * the same zod schemas the handlers validate with. `test/functions/manifest.test.ts` fails when a route lacks one.
 */
export const ROUTE_DOCS: Record<string, RouteDoc> = {
  'GET /health': { summary: 'Liveness probe', response: z.object({ status: z.literal('ok') }) },
  'GET /openapi.json': { summary: 'This OpenAPI 3.1 document' },
  'POST /v1/chat/completions': {
    summary: 'Create a chat completion (vLLM/OpenAI-compatible); SSE when `stream` is true',
    body: ChatCompletionRequestSchema,
  },
  'GET /v1/models': { summary: 'List the models the caller may use' },
  'GET /v1/usage': { summary: 'Gateway usage per hour, project and model, with costs', query: UsageQuerySchema },
}
