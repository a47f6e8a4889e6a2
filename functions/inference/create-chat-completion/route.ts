import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { projectHeaders } from '#shared/routes/inference-headers'
import {
  ChatCompletionChunkSchema,
  ChatCompletionRequestSchema,
  ChatCompletionResponseSchema,
} from '#shared/schemas/chat-completion'

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
  // docs/inference.md §1
  headers: [
    ...projectHeaders('usage is metered and the completion traced there'),
    {
      name: 'X-Request-Id',
      description:
        "The request's id: the answer's id is `chatcmpl-<X-Request-Id>` (without it, the body's `request_id`, else " +
        "Loom's own id), echoed in the response's `X-Request-Id`",
    },
    {
      name: 'Loom-Trace',
      description:
        '`off` (or `false`, `0`, `no`, any case) skips recording the completion as a `loom.chat.completions` call; ' +
        'any other value, or none, traces it',
    },
  ],
  response: ChatCompletionResponseSchema,
  // docs/inference.md §6
  alternativeResponse: {
    mediaType: 'text/event-stream',
    description:
      'when the body sets `stream: true`: events `data: <chat.completion.chunk>` (this schema), then `data: [DONE]`; ' +
      'an error after the first byte is a `data: {"error": …}` event before `[DONE]`; comments are heartbeats',
    schema: ChatCompletionChunkSchema,
  },
  // docs/inference.md §4
  errors: {
    '400':
      "Request validation (vLLM's message, `param` the field), a serving rule, the project header, or a body that " +
      'is not `application/json`',
    '402': "The upstream's quota is exhausted (`PaymentRequiredError`)",
    '404': 'The model does not exist or the caller may not use it (`param: "model"`)',
    '422': "The upstream's `UnprocessableEntityError`",
    '500': 'A generation error, an upstream that refused the gateway, or an unexpected failure: a generic message',
    '501': "The upstream's `NotImplementedError`",
    '503': 'The engine is overloaded, the upstream unreachable, or the model catalog or its upstream misconfigured',
  },
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
