import type { Hono } from 'hono'
import { streamHandle } from 'hono/aws-lambda'
import { afterResponse, settleAfterResponse } from '#shared/http/after-response'
import { publishRequestMetrics } from '#shared/http/metrics'

type StreamHandler = ReturnType<typeof streamHandle>
type LambdaGlobal = { awslambda?: { streamifyResponse?: (handler: StreamHandler) => StreamHandler } }

/** What this module uses of the runtime's response stream (a writable, though not a Node `Writable` instance). */
type ResponseStream = { on(event: 'close' | 'error', listener: () => void): unknown; readonly destroyed?: boolean }

// Hono's `streamHandle` pipes the body into the response stream with `pipeline`, which leaves the body's reader
// uncancelled when that stream errors or closes first (the client went away): nothing would stop the upstream, meter
// the completion or free its concurrency slot. So the body Hono reads is a pass-through whose source can be cancelled
// here, when the response stream errors or closes before the body has ended.
function cancelledOnClose(res: Response, responseStream: ResponseStream): Response {
  const body = res.body
  if (body === null) return res
  const reader = body.getReader()
  let ended = false
  const cancel = (reason: unknown) => {
    if (ended) return
    ended = true
    // The cancel stops the backend, meters what was generated and frees the slot: the invocation waits for it.
    afterResponse(reader.cancel(reason))
  }
  const closed = () => cancel(new Error('The response stream closed before the body ended (client disconnected)'))
  responseStream.on('error', closed)
  responseStream.on('close', closed)
  // A client gone before the body existed (while the handler waited for its first chunk) left no event to see.
  if (responseStream.destroyed === true) closed()
  const passThrough = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const result = await reader.read()
          if (result.done) {
            ended = true
            controller.close()
          } else {
            controller.enqueue(result.value)
          }
        } catch (error) {
          ended = true
          controller.error(error)
        }
      },
      cancel,
    },
    // Reads only when Hono reads: no chunk is taken from the body ahead of the client.
    { highWaterMark: 0 },
  )
  return new Response(passThrough, res)
}

/**
 * The entry of a function declared `stream: true`: its answer, a stream or a whole JSON body (the tracing reads whose
 * answers may pass the 6 MB a buffered function may return), goes out after the status/headers prelude.
 * `streamHandle(app)` where the Lambda runtime provides `awslambda.streamifyResponse`; elsewhere (the local server,
 * tests that only call `app.request`) a handler that refuses to run, so importing a streaming function never throws.
 * When the response stream errors or closes before the body has ended (the client disconnected), the body is
 * cancelled, as the local server cancels it: a streamed completion stops its upstream, is metered and frees its slot.
 * Once the response stream has ended (the client has everything), the invocation goes on until the work handed to
 * `afterResponse` has settled (Lambda bills that time, the client does not wait for it), then publishes the
 * invocation's request metrics (the app's middleware returns when streaming starts, so they are complete only now).
 */
// biome-ignore lint/suspicious/noExplicitAny: Hono apps of any environment and schema are accepted, as streamHandle does
export function lambdaStreamHandler(app: Hono<any, any, any>): StreamHandler {
  const streamify = (globalThis as unknown as LambdaGlobal).awslambda?.streamifyResponse
  if (typeof streamify !== 'function') {
    return (() => {
      throw new Error('This handler runs only inside AWS Lambda (awslambda.streamifyResponse is missing)')
    }) as unknown as StreamHandler
  }
  // `streamHandle` calls only `app.fetch`, with the invocation's event in its environment: the event finds the
  // invocation's response stream.
  const streams = new WeakMap<object, ResponseStream>()
  const watched = {
    fetch: async (request: Request, env: { event: object }) => {
      const res: Response = await app.fetch(request, env)
      const responseStream = streams.get(env.event)
      return responseStream === undefined ? res : cancelledOnClose(res, responseStream)
    },
  }
  // The runtime's `streamifyResponse` marks the function it is given and returns it, so Hono's already streamified
  // handler can be called from within another streaming handler (which needs the marker again).
  const respond = streamHandle(watched as unknown as typeof app)
  return streamify(async (event, responseStream, context) => {
    const started = performance.now()
    // Hono types the streaming handler as a buffered one: its second argument is the response stream here.
    streams.set(event, responseStream as unknown as ResponseStream)
    try {
      await respond(event, responseStream, context)
    } finally {
      streams.delete(event)
      const latency = performance.now() - started
      await settleAfterResponse()
      publishRequestMetrics(latency)
    }
  })
}
