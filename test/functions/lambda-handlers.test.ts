import '../support/lambda-shim.js'
import { PassThrough } from 'node:stream'
import { Hono } from 'hono'
import { beforeAll, describe, expect, it } from 'vitest'
import { FUNCTIONS, type FunctionEntry } from '#functions/manifest'
import { principalToAuthorizerContext } from '#shared/http/authorizer-context'
import { newCaller, type TestCaller } from '../support/auth.js'
import { lambdaContext, restEvent } from '../support/events.js'

type Buffered = (event: unknown, context: unknown) => Promise<{ statusCode: number; body: string }>
type Streaming = (event: unknown, stream: PassThrough, context: unknown) => Promise<void>
type FunctionModule = { app?: unknown; handler?: unknown }

let caller: TestCaller

beforeAll(async () => {
  caller = await newCaller()
})

async function load(entry: FunctionEntry): Promise<FunctionModule> {
  return (await import(/* @vite-ignore */ `#functions/${entry.id}/handler`)) as FunctionModule
}

// The streaming adapter hands its status line to `HttpResponseStream.from`; the shim's version drops it, so this file
// records it to assess streamed answers too.
let streamedStatus: number | undefined
const lambda = (globalThis as unknown as { awslambda: { HttpResponseStream: unknown } }).awslambda
lambda.HttpResponseStream = {
  from: (stream: PassThrough, metadata: { statusCode: number }) => {
    streamedStatus = metadata.statusCode
    return stream
  },
}

async function invoke(
  entry: FunctionEntry,
  handler: unknown,
  event: unknown,
): Promise<{ status: number; body: string }> {
  if (entry.stream !== true) {
    const result = await (handler as Buffered)(event, lambdaContext())
    return { status: result.statusCode, body: result.body }
  }
  streamedStatus = undefined
  const stream = new PassThrough()
  let body = ''
  stream.on('data', (piece: Buffer) => {
    body += String(piece)
  })
  await (handler as Streaming)(event, stream, lambdaContext())
  return { status: streamedStatus ?? 0, body }
}

describe('every manifest function as a Lambda', () => {
  it('exports its Hono `app` and a `handler` function', async () => {
    for (const entry of FUNCTIONS) {
      // Act
      const mod = await load(entry)

      // Assess
      expect(mod.app, entry.id).toBeInstanceOf(Hono)
      expect(typeof mod.handler, entry.id).toBe('function')
    }
  })

  it('answers a REST proxy event on each of its routes without a 500 or a missing route', async () => {
    // Prepare
    const authorizer = principalToAuthorizerContext({
      userId: caller.userId,
      keyId: caller.keyId,
      entity: caller.entity,
      entities: [caller.entity],
    })
    for (const entry of FUNCTIONS) {
      const { handler } = await load(entry)
      for (const route of entry.routes) {
        const event = restEvent({
          method: route.method,
          path: route.path.replace(/:([A-Za-z_]+)/g, 'x'),
          headers: { ...caller.bearer, 'content-type': 'application/json' },
          ...(route.method === 'GET' ? {} : { body: '{}' }),
          ...(entry.auth ? { authorizer } : {}),
        })

        // Act
        const { status, body } = await invoke(entry, handler, event)

        // Assess
        const label = `${entry.id} ${route.method} ${route.path}`
        expect(status, label).toBeGreaterThanOrEqual(200)
        expect(status, label).toBeLessThan(500)
        expect(body, label).not.toContain('No route for')
      }
    }
  })
})
