import type { Hono } from 'hono'
import { streamHandle } from 'hono/aws-lambda'
import { settleAfterResponse } from '#shared/http/after-response'

type StreamingHandler = (event: unknown, responseStream: unknown, context: unknown) => Promise<void>
type LambdaGlobal = { awslambda?: { streamifyResponse?: (handler: StreamingHandler) => StreamingHandler } }

/**
 * `streamHandle(app)` where the Lambda runtime provides `awslambda.streamifyResponse`; elsewhere (the local server,
 * tests that only call `app.request`) a handler that refuses to run, so importing a streaming function never throws.
 * Once the response stream has ended (the client has everything), the invocation goes on until the work handed to
 * `afterResponse` has settled: Lambda bills that time but the client does not wait for it.
 */
// biome-ignore lint/suspicious/noExplicitAny: Hono apps of any environment and schema are accepted, as streamHandle does
export function lambdaStreamHandler(app: Hono<any, any, any>): ReturnType<typeof streamHandle> {
  const streamify = (globalThis as LambdaGlobal).awslambda?.streamifyResponse
  if (typeof streamify !== 'function') {
    return (() => {
      throw new Error('This handler runs only inside AWS Lambda (awslambda.streamifyResponse is missing)')
    }) as unknown as ReturnType<typeof streamHandle>
  }
  // The runtime's `streamifyResponse` marks the function it is given and returns it, so Hono's handler can be called
  // from within another streaming handler.
  const respond = streamHandle(app) as unknown as StreamingHandler
  return streamify(async (event, responseStream, context) => {
    try {
      await respond(event, responseStream, context)
    } finally {
      await settleAfterResponse()
    }
  }) as unknown as ReturnType<typeof streamHandle>
}
