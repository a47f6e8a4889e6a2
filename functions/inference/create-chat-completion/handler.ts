import { createInferenceApp } from '#shared/http/create-app'
import { lambdaStreamHandler } from '#shared/http/lambda-stream'
import { chatCompletions } from '#shared/inference/chat-completions'

/** `POST /v1/chat/completions` (with or without trailing slash): OpenAI/vLLM chat completions, JSON or SSE. */
export const app = createInferenceApp()
  .post('/v1/chat/completions', chatCompletions)
  .post('/v1/chat/completions/', chatCompletions)

/** The Lambda entry: a response-streaming handler (`streamHandle`). */
export const handler = lambdaStreamHandler(app)
