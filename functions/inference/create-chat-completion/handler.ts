import { createInferenceApp } from '#shared/http/create-app'
import { lambdaStreamHandler } from '#shared/http/lambda-stream'
import { chatCompletions } from '#shared/inference/chat-completions'
import { route } from './route.js'

/** `POST /v1/chat/completions` (a trailing slash too, as on every route): OpenAI/vLLM chat completions, JSON or SSE. */
export const app = createInferenceApp().on(route.method, route.path, chatCompletions)

/** The Lambda entry: a response-streaming handler (`streamHandle`). */
export const handler = lambdaStreamHandler(app)
