import { Writable } from 'node:stream'
import type { Context } from 'aws-lambda'
import type { LambdaEvent } from 'hono/aws-lambda'
import { lambdaContext } from './events.js'
import './lambda-shim.js'

/** A function's answer as API Gateway makes an HTTP response of it, whether the function returned or streamed it. */
export type LambdaAnswer = {
  statusCode: number
  /** The response headers, names in lower case. */
  headers: Record<string, string>
  /** The body as UTF-8 text. */
  body: string
  /** The body's bytes (a buffered function's base64 decoded, as API Gateway decodes it). */
  bytes: Buffer
  /** Whether the function streamed its answer (Lambda response streaming) rather than returning it. */
  streamed: boolean
}

// What the runtime's `HttpResponseStream.from` writes between the status/headers prelude and the body
// (aws-lambda-nodejs-runtime-interface-client `HttpResponseStream.js`): API Gateway splits the stream there.
const DELIMITER = Buffer.alloc(8)

type Prelude = { statusCode?: number; headers?: Record<string, string>; cookies?: string[] }
type From = ((stream: unknown, prelude: Prelude) => unknown) & { [WRITES_PRELUDE]?: true }
type LambdaGlobal = { awslambda: { HttpResponseStream: { from: From } } }
const WRITES_PRELUDE = Symbol('writes the prelude')

// The shim's `from` drops the prelude; for the streams made here it is written as the runtime writes it (JSON, then
// eight NUL bytes), so the answer is parsed from the bytes API Gateway would read. Other streams keep the `from` in
// place, which a test file may have replaced with its own: checked at every invocation, never restored.
const collected = new WeakSet<object>()
function writePreludes(): void {
  const responseStream = (globalThis as unknown as LambdaGlobal).awslambda.HttpResponseStream
  if (responseStream.from[WRITES_PRELUDE]) return
  const previous = responseStream.from
  const from: From = (stream, prelude) => {
    if (typeof stream !== 'object' || stream === null || !collected.has(stream)) return previous(stream, prelude)
    ;(stream as Writable).write(JSON.stringify(prelude))
    ;(stream as Writable).write(DELIMITER)
    return stream
  }
  from[WRITES_PRELUDE] = true
  responseStream.from = from
}

type BufferedResult = {
  statusCode: number
  body: string
  isBase64Encoded?: boolean
  headers?: Record<string, string>
  multiValueHeaders?: Record<string, string[]>
}

// `lambdaStreamHandler` hands the runtime `(event, responseStream, context)`; `lambdaHandler` and hono's `handle`
// take `(event, context)` (`lambdaHandler` as rest parameters).
function isStreaming(handler: (...args: never[]) => unknown): boolean {
  return handler.length === 3
}

/**
 * Invokes a function's Lambda entry with an API Gateway event, as the REST integration its manifest entry declares
 * would: a streaming entry (`lambdaStreamHandler`) with a response stream whose prelude and body are parsed as API
 * Gateway parses them, a buffered one (`lambdaHandler`) for its returned proxy result.
 */
export async function invokeLambda(
  handler: (...args: never[]) => unknown,
  event: LambdaEvent,
  context: Context = lambdaContext(),
): Promise<LambdaAnswer> {
  if (!isStreaming(handler)) {
    const result = (await (handler as (e: LambdaEvent, c: Context) => Promise<unknown>)(
      event,
      context,
    )) as BufferedResult
    const headers = Object.fromEntries([
      ...Object.entries(result.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v]),
      ...Object.entries(result.multiValueHeaders ?? {}).map(([k, v]) => [k.toLowerCase(), v.join(',')]),
    ])
    const bytes = Buffer.from(result.body, result.isBase64Encoded === true ? 'base64' : 'utf8')
    return { statusCode: result.statusCode, headers, body: bytes.toString('utf8'), bytes, streamed: false }
  }
  const chunks: Buffer[] = []
  const stream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      chunks.push(Buffer.from(chunk))
      callback()
    },
  })
  collected.add(stream)
  writePreludes()
  await (handler as (e: LambdaEvent, s: Writable, c: Context) => Promise<void>)(event, stream, context)
  const all = Buffer.concat(chunks)
  const split = all.indexOf(DELIMITER)
  if (split < 0) throw new Error(`The streamed answer has no status/headers prelude: ${all.subarray(0, 200)}`)
  const prelude = JSON.parse(all.subarray(0, split).toString('utf8')) as Prelude
  const bytes = all.subarray(split + DELIMITER.length)
  return {
    statusCode: prelude.statusCode ?? 200,
    headers: Object.fromEntries(Object.entries(prelude.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v])),
    body: bytes.toString('utf8'),
    bytes,
    streamed: true,
  }
}
