import type { Context } from 'hono'
import { config } from '#shared/config'
import { afterResponse } from '#shared/http/after-response'
import type { AppEnv } from '#shared/http/app-env'
import { addRequestMetric } from '#shared/http/metrics'
import { nodeBindings, requestHeader, setResponseHeader } from '#shared/http/node-bindings'
import { streamOnNode } from '#shared/http/node-stream'
import { readJsonBody } from '#shared/http/read-json'
import type { ChatBackend, ChatBackendCall } from '#shared/inference/backend'
import { backendFor } from '#shared/inference/backend-registry'
import { Cancellation } from '#shared/inference/cancellation'
import { resolveModel } from '#shared/inference/catalog'
import { admitCompletion, type TokenCharge } from '#shared/inference/completion-limits'
import { checkServingRules } from '#shared/inference/serving-rules'
import { firstWithin, type StreamItem, sseReadable, sseSource } from '#shared/inference/sse-stream'
import type { StreamOutcome } from '#shared/inference/stream-tally'
import { traceCompletion, traceOptedOut } from '#shared/inference/trace-completion'
import { afterCompletion, promptOf, recordUsage } from '#shared/inference/usage-meter'
import { parseChatRequest } from '#shared/inference/validate-request'
import type { ChatCompletionResponse } from '#shared/schemas/chat-completion'

/** Response header carrying the gateway's own time in ms (total minus the backend's, up to the first byte). */
export const OVERHEAD_HEADER = 'Loom-Overhead-Ms'

const SSE_CONTENT_TYPE = { 'content-type': 'text/event-stream; charset=utf-8' }

// The header's milliseconds with three decimals, as `toFixed(3)` writes them, without it: V8's toFixed formats through
// exact decimal arithmetic and was as costly as a request's metering. A tie in the fourth decimal may round the other
// way; the value is a timing.
function ms(value: number): string {
  if (!(value >= 0 && value < 1e9)) return value.toFixed(3)
  const thousandths = Math.round(value * 1000)
  const fraction = thousandths % 1000
  return `${(thousandths - fraction) / 1000}.${fraction < 10 ? '00' : fraction < 100 ? '0' : ''}${fraction}`
}

/**
 * How a completion ended, for metering and tracing; `unserved` when it failed before the upstream generated anything
 * (then it is traced with its exception and no usage, and not metered). `aborted`: cut short, by the client or by a
 * failure after the backend's first chunk (docs/inference.md §4.5, §12).
 */
type Ending = {
  usage: StreamOutcome['usage']
  aborted: boolean
  output: unknown
  exception?: string
  unserved?: boolean
}

/** Meters a completion and traces it; resolves when what must precede the end of the response is done. */
type Finish = (ending: Ending) => Promise<void>

function finisher(c: Context<AppEnv>, call: ChatBackendCall, charge: TokenCharge | undefined, traced: boolean): Finish {
  const project = c.get('project')
  const principal = c.get('auth')
  const startedAt = new Date()
  return (ending) => {
    const { usage, aborted } = ending
    const metered = ending.unserved !== true
    const flushed = metered ? meter(usage, aborted) : Promise.resolve()
    if (!traced) return flushed
    const trace = traceCompletion({
      principal,
      projectId: project.id,
      model: call.model,
      request: call.request,
      output: ending.output,
      // The trace carries the usage the meter counted, none when nothing was metered: `trace/usage` then agrees
      // with `/v1/usage`.
      usage: metered ? usage : undefined,
      startedAt,
      endedAt: new Date(),
      ...(ending.exception === undefined ? {} : { exception: ending.exception }),
    })
    // Never on the response's path; in Lambda the handler waits for it once the response has ended.
    afterResponse(trace)
    return flushed
  }

  function meter(usage: Ending['usage'], aborted: boolean): Promise<void> {
    addRequestMetric('PromptTokens', usage.prompt_tokens)
    addRequestMetric('CompletionTokens', usage.completion_tokens)
    recordUsage({ entity: project.entity, project: project.project, model: call.model, usage, aborted })
    // Token limits count what was generated, aborted or not; awaited with the flush so Lambda cannot freeze it away.
    return charge === undefined
      ? afterCompletion()
      : Promise.all([afterCompletion(), charge(usage.prompt_tokens + usage.completion_tokens)]).then(() => undefined)
  }
}

function assembled(call: ChatBackendCall, outcome: StreamOutcome) {
  const contents = outcome.contents ?? []
  return {
    id: `chatcmpl-${call.requestId}`,
    object: 'chat.completion',
    created: call.created,
    model: call.model.id,
    choices: contents.map((content, index) => {
      const extras = outcome.extras?.[index]
      const { logprobs, ...more } = extras ?? {}
      return {
        index,
        message: { role: 'assistant', content, ...more },
        logprobs: logprobs === undefined ? null : { content: logprobs },
        finish_reason: outcome.finishReasons?.[index] ?? null,
      }
    }),
    usage: { ...outcome.usage, total_tokens: outcome.usage.prompt_tokens + outcome.usage.completion_tokens },
  }
}

const errorText = (error: unknown): string => String((error as Error | undefined)?.message ?? error)

function exceptionOf(outcome: StreamOutcome): string | undefined {
  if (outcome.aborted) return 'Client disconnected'
  return outcome.error === undefined ? undefined : errorText(outcome.error)
}

/**
 * How a completion ended whose backend failed before its first chunk or its body (the error then becomes the JSON
 * error answer): a client that left meanwhile is metered as a stream it left before its first chunk (the upstream has
 * the prompt, stream-tally.ts), with the prompt as the backend counted it when it did (`promptOf`); any other failure
 * is unserved, traced with its error and no usage, and not metered.
 */
function failedBeforeOutput(call: ChatBackendCall, error: unknown): Ending {
  if (call.signal.aborted) {
    const usage = { ...promptOf(call), completion_tokens: 0 }
    return { usage, aborted: true, output: null, exception: 'Client disconnected' }
  }
  const usage = { prompt_tokens: 0, completion_tokens: 0 }
  return { usage, aborted: false, output: null, exception: errorText(error), unserved: true }
}

/**
 * How a stream ended, for metering and tracing. A stream cut short after the backend's first chunk (the client left,
 * the upstream disconnected or sent an error event) is aborted, metered with the prompt and the tokens delivered;
 * unless the backend reported its final usage, the prompt and its cached tokens are what the backend learned of them
 * (`ChatBackendCall.known`, the reference engine) where it did. A stream that failed before any chunk is unserved.
 */
function streamEnding(call: ChatBackendCall, outcome: StreamOutcome, output: unknown): Ending {
  const ending: Ending = { usage: outcome.usage, aborted: outcome.aborted, output }
  if (outcome.unserved === true) ending.unserved = true
  // Cut short after the first chunk by an upstream disconnect or error event: aborted, as a client abort is.
  else if (outcome.error !== undefined) ending.aborted = true
  // The backend's own final usage carries `prompt_tokens_details` (an object or null); a tally's count does not.
  if (ending.aborted && ending.usage.prompt_tokens_details === undefined && call.known !== undefined) {
    ending.usage = { ...ending.usage, ...call.known }
  }
  const exception = exceptionOf(outcome)
  if (exception !== undefined) ending.exception = exception
  return ending
}

async function complete(
  c: Context<AppEnv>,
  backend: ChatBackend,
  call: ChatBackendCall,
  started: number,
  finish: Finish,
) {
  const backendStarted = performance.now()
  let response: ChatCompletionResponse
  try {
    response = await backend.complete(call)
  } catch (error) {
    await finish(failedBeforeOutput(call, error))
    throw error
  }
  const backendMs = performance.now() - backendStarted
  await finish({ usage: response.usage, aborted: false, output: response })
  const overhead = performance.now() - started - backendMs
  addRequestMetric('GatewayOverhead', overhead)
  setResponseHeader(c, OVERHEAD_HEADER, ms(overhead))
  return c.json(response, 200)
}

async function stream(
  c: Context<AppEnv>,
  backend: ChatBackend,
  call: ChatBackendCall,
  abort: () => void,
  started: number,
  finish: Finish,
  traced: boolean,
) {
  // A backend that reads chunks in bulk hands over each read's chunks at once.
  const items: AsyncIterable<StreamItem> = backend.streamBatches?.(call) ?? backend.stream(call)
  const iterator = items[Symbol.asyncIterator]()
  const backendStarted = performance.now()
  const { first, settled } = await firstWithin(iterator)
  // Before the first byte an error is still an ordinary JSON answer with its status (docs/inference.md §4.5); it is
  // traced as the same error after heartbeats is (sse-stream.ts), only answered differently.
  if (settled) {
    try {
      await first
    } catch (error) {
      await finish(failedBeforeOutput(call, error))
      throw error
    }
  }
  const firstAt = performance.now()
  const source = sseSource(iterator, {
    request: call.request,
    first,
    waiting: !settled,
    // The text is assembled only for the completion's trace.
    collect: traced,
    abort,
    onEnd: (outcome) => finish(streamEnding(call, outcome, traced ? assembled(call, outcome) : null)),
  })
  const overhead = backendStarted - started + (performance.now() - firstAt)
  addRequestMetric('GatewayOverhead', overhead)
  // Headers go through `setResponseHeader` and the answer names only its content type: Hono builds a fetch `Headers`
  // for an answer given more than one header.
  setResponseHeader(c, OVERHEAD_HEADER, ms(overhead))
  setResponseHeader(c, 'cache-control', 'no-cache')
  setResponseHeader(c, 'x-accel-buffering', 'no')
  // On the Node server the events are written to its response directly; elsewhere they are a ReadableStream body.
  return streamOnNode(c, SSE_CONTENT_TYPE, source) ?? c.body(sseReadable(source), 200, SSE_CONTENT_TYPE)
}

// On the Node server the response's `close` tells a disconnect without materialising a full `Request` (its `signal`
// getter costs more than the rest of the request's bookkeeping); elsewhere the request's signal does.
function watchDisconnect(c: Context<AppEnv>, abort: () => void): void {
  const outgoing = nodeBindings(c)?.outgoing
  if (outgoing !== undefined) {
    outgoing.once('close', () => {
      if (!outgoing.writableFinished) abort()
    })
    return
  }
  c.req.raw.signal?.addEventListener('abort', abort, { once: true })
}

/**
 * `POST /v1/chat/completions`: validates the body (docs/inference.md §2–3), resolves the model for the caller's entity,
 * applies the serving rules, runs the model's backend and answers JSON or SSE; usage is metered for every
 * completion, finished or aborted.
 */
export async function chatCompletions(c: Context<AppEnv>): Promise<Response> {
  const started = performance.now()
  const request = parseChatRequest(await readJsonBody(c))
  const resolved = resolveModel(request.model, c.get('project').entity)
  const model = resolved instanceof Promise ? await resolved : resolved
  checkServingRules(request, model)
  const admission = admitCompletion(c, model)
  const charge = admission === undefined ? undefined : await admission
  const cancellation = new Cancellation()
  const abort = () => cancellation.abort()
  watchDisconnect(c, abort)
  const call: ChatBackendCall = {
    request,
    model,
    // Without an `X-Request-Id` or a body `request_id`, the id the response's `X-Request-Id` already carries.
    requestId: requestHeader(c, 'x-request-id') ?? request.request_id ?? c.get('requestId'),
    created: Math.floor(Date.now() / 1000),
    signal: cancellation,
  }
  const traced = config.inference.tracing && !traceOptedOut(requestHeader(c, 'loom-trace'))
  const finish = finisher(c, call, charge, traced)
  const loaded = backendFor(model.backend.kind)
  const backend = loaded instanceof Promise ? await loaded : loaded
  return request.stream === true
    ? stream(c, backend, call, abort, started, finish, traced)
    : complete(c, backend, call, started, finish)
}
