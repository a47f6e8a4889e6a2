import { randomUUID } from 'node:crypto'
import type { Context } from 'hono'
import type { AppEnv } from '#shared/http/app-env'
import { readJsonBody } from '#shared/http/read-json'
import type { ChatBackendCall } from '#shared/inference/backend'
import { backendFor } from '#shared/inference/backend-registry'
import { resolveModel } from '#shared/inference/catalog'
import { checkServingRules } from '#shared/inference/serving-rules'
import { firstWithin, type StreamOutcome, sseStream } from '#shared/inference/sse-stream'
import { afterCompletion, recordUsage } from '#shared/inference/usage-meter'
import { parseChatRequest } from '#shared/inference/validate-request'
import type { ChatCompletionResponse } from '#shared/schemas/chat-completion'

/** Response header carrying the gateway's own time in ms (total minus the backend's, up to the first byte). */
export const OVERHEAD_HEADER = 'Loom-Overhead-Ms'

const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
}

const ms = (value: number) => value.toFixed(3)

/** What happens once a completion is over: metering now, tracing when wired; flushed per the meter's policy. */
type Finish = (usage: StreamOutcome['usage'], aborted: boolean) => Promise<void>

function finisher(c: Context<AppEnv>, call: ChatBackendCall): Finish {
  const project = c.get('project')
  return (usage, aborted) => {
    recordUsage({ entity: project.entity, project: project.project, model: call.model, usage, aborted })
    return afterCompletion()
  }
}

async function complete(c: Context<AppEnv>, call: ChatBackendCall, started: number, finish: Finish) {
  const backend = await backendFor(call.model.backend.kind)
  const backendStarted = performance.now()
  let response: ChatCompletionResponse
  try {
    response = await backend.complete(call)
  } catch (error) {
    if (call.signal.aborted) await finish({ prompt_tokens: 0, completion_tokens: 0 }, true)
    throw error
  }
  const backendMs = performance.now() - backendStarted
  await finish(response.usage, false)
  c.header(OVERHEAD_HEADER, ms(performance.now() - started - backendMs))
  return c.json(response, 200)
}

async function stream(c: Context<AppEnv>, call: ChatBackendCall, abort: () => void, started: number, finish: Finish) {
  const backend = await backendFor(call.model.backend.kind)
  const iterator = backend.stream(call)[Symbol.asyncIterator]()
  const backendStarted = performance.now()
  const { first, settled } = await firstWithin(iterator)
  // Before the first byte an error is still an ordinary JSON answer with its status (contract §4.5).
  if (settled) await first
  const firstAt = performance.now()
  const body = sseStream(iterator, {
    request: call.request,
    first,
    waiting: !settled,
    collect: false,
    abort,
    onEnd: (outcome) => finish(outcome.usage, outcome.aborted),
  })
  c.header(OVERHEAD_HEADER, ms(backendStarted - started + (performance.now() - firstAt)))
  return c.body(body, 200, SSE_HEADERS)
}

/**
 * `POST /v1/chat/completions`: validates the body (contract §2–3), resolves the model for the caller's entity,
 * applies the serving rules, runs the model's backend and answers JSON or SSE; usage is metered for every
 * completion, finished or aborted.
 */
export async function chatCompletions(c: Context<AppEnv>): Promise<Response> {
  const started = performance.now()
  const request = parseChatRequest(await readJsonBody(c))
  const model = await resolveModel(request.model, c.get('project').entity)
  checkServingRules(request, model)
  const controller = new AbortController()
  const abort = () => controller.abort()
  c.req.raw.signal?.addEventListener('abort', abort, { once: true })
  const call: ChatBackendCall = {
    request,
    model,
    requestId: c.req.header('x-request-id') ?? request.request_id ?? randomUUID(),
    created: Math.floor(Date.now() / 1000),
    signal: controller.signal,
  }
  const finish = finisher(c, call)
  return request.stream === true ? stream(c, call, abort, started, finish) : complete(c, call, started, finish)
}
