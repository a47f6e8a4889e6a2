import { streamHandle } from 'hono/aws-lambda'
import { createInferenceApp } from '#shared/http/create-app'
import { chatCompletions } from '#shared/inference/chat-completions'

/** `POST /v1/chat/completions` (with or without trailing slash): OpenAI/vLLM chat completions, JSON or SSE. */
export const app = createInferenceApp()
  .post('/v1/chat/completions', chatCompletions)
  .post('/v1/chat/completions/', chatCompletions)

export const handler = streamHandle(app)
