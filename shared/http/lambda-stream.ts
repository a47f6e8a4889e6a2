import type { Hono } from 'hono'
import { streamHandle } from 'hono/aws-lambda'
import { settleAfterResponse } from '#shared/http/after-response'
import { publishRequestMetrics } from '#shared/http/metrics'

type StreamHandler = ReturnType<typeof streamHandle>
type LambdaGlobal = { awslambda?: { streamifyResponse?: (handler: StreamHandler) => StreamHandler } }

/**
 * `streamHandle(app)` where the Lambda runtime provides `awslambda.streamifyResponse`; elsewhere (the local server,
 * tests that only call `app.request`) a handler that refuses to run, so importing a streaming function never throws.
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
  // The runtime's `streamifyResponse` marks the function it is given and returns it, so Hono's already streamified
  // handler can be called from within another streaming handler (which needs the marker again).
  const respond = streamHandle(app)
  return streamify(async (event, responseStream, context) => {
    const started = performance.now()
    try {
      await respond(event, responseStream, context)
    } finally {
      const latency = performance.now() - started
      await settleAfterResponse()
      publishRequestMetrics(latency)
    }
  })
}
