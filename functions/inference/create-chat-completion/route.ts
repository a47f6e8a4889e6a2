import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { ChatCompletionRequestSchema } from '#shared/schemas/chat-completion'

/** `POST /v1/chat/completions`: the route inference/create-chat-completion serves. */
export const route = declareRoute({
  id: 'inference/create-chat-completion',
  family: 'inference',
  access: 'write',
  stream: true,
  longRunning: true,
  auth: true,
  method: 'POST',
  path: '/v1/chat/completions',
  summary: 'Create a chat completion (vLLM/OpenAI-compatible); SSE when `stream` is true',
  body: ChatCompletionRequestSchema,
  example: {
    body: {
      model: EXAMPLE_IDS.model,
      messages: [
        { role: 'system', content: 'You are a concise assistant.' },
        { role: 'user', content: 'Name the three primary colors.' },
      ],
      max_tokens: 64,
      temperature: 0.7,
    },
  },
})
