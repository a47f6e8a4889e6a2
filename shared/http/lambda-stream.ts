import type { Hono } from 'hono'
import { streamHandle } from 'hono/aws-lambda'
import { publishRequestMetrics } from '#shared/http/metrics'

type StreamHandler = ReturnType<typeof streamHandle>
type LambdaGlobal = { awslambda?: { streamifyResponse?: (handler: StreamHandler) => StreamHandler } }

/**
 * `streamHandle(app)` where the Lambda runtime provides `awslambda.streamifyResponse`, publishing the invocation's
 * request metrics once the response stream has ended (the app's middleware returns when streaming starts); elsewhere
 * (the local server, tests that only call `app.request`) a handler that refuses to run, so importing a streaming
 * function never throws.
 */
// biome-ignore lint/suspicious/noExplicitAny: Hono apps of any environment and schema are accepted, as streamHandle does
export function lambdaStreamHandler(app: Hono<any, any, any>): StreamHandler {
  const streamify = (globalThis as unknown as LambdaGlobal).awslambda?.streamifyResponse
  if (typeof streamify === 'function') {
    const stream = streamHandle(app)
    // streamHandle's result is already streamified; wrapping it needs the runtime's marker again.
    return streamify(async (event, responseStream, context) => {
      const started = performance.now()
      try {
        await stream(event, responseStream, context)
      } finally {
        publishRequestMetrics(performance.now() - started)
      }
    })
  }
  return (() => {
    throw new Error('This handler runs only inside AWS Lambda (awslambda.streamifyResponse is missing)')
  }) as unknown as StreamHandler
}
