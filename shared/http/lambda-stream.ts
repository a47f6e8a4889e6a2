import type { Hono } from 'hono'
import { streamHandle } from 'hono/aws-lambda'

type LambdaGlobal = { awslambda?: { streamifyResponse?: unknown } }

/**
 * `streamHandle(app)` where the Lambda runtime provides `awslambda.streamifyResponse`; elsewhere (the local server,
 * tests that only call `app.request`) a handler that refuses to run, so importing a streaming function never throws.
 */
// biome-ignore lint/suspicious/noExplicitAny: Hono apps of any environment and schema are accepted, as streamHandle does
export function lambdaStreamHandler(app: Hono<any, any, any>): ReturnType<typeof streamHandle> {
  if (typeof (globalThis as LambdaGlobal).awslambda?.streamifyResponse === 'function') return streamHandle(app)
  return (() => {
    throw new Error('This handler runs only inside AWS Lambda (awslambda.streamifyResponse is missing)')
  }) as unknown as ReturnType<typeof streamHandle>
}
