import type { Context, MiddlewareHandler, Next } from 'hono'
import type { AppEnv } from '#shared/http/app-env'
import { admit, keyScope, type Release } from '#shared/limits/limiter'

/** Frees `release` once the response has ended: at once for a JSON body, at the end (or cancel) of a streamed one. */
export function releaseAfterResponse(c: Context<AppEnv>, release: Release): void {
  const releases = c.get('releases')
  if (releases === undefined) c.set('releases', [release])
  else releases.push(release)
}

/**
 * Hands what the request holds to a handler that writes its streamed answer itself (shared/http/node-stream.ts) and
 * frees it when that answer ends: the returned function frees it (once, however often it is called), and the
 * middleware then leaves it alone.
 */
export function takeReleases(c: Context<AppEnv>): () => Promise<void> {
  const releases = c.get('releases') ?? []
  c.set('releases', undefined)
  let released: Promise<void> | undefined
  return () => {
    released ??= Promise.all(releases.map((release) => release())).then(() => undefined)
    return released
  }
}

// Passes the body through unchanged and runs `release` when it is fully read, fails, or the client cancels it (the
// cancel still reaches the inner stream, so an aborted completion stops its backend and is metered).
function releasing(body: ReadableStream<Uint8Array>, release: () => Promise<void>): ReadableStream<Uint8Array> {
  const reader = body.getReader()
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let result: Awaited<ReturnType<typeof reader.read>>
      try {
        result = await reader.read()
      } catch (error) {
        await release()
        controller.error(error)
        return
      }
      if (result.done) {
        await release()
        controller.close()
      } else {
        controller.enqueue(result.value)
      }
    },
    async cancel(reason) {
      try {
        await reader.cancel(reason)
      } finally {
        await release()
      }
    },
  })
}

function settle(c: Context<AppEnv>): Promise<void> | undefined {
  const releases = c.get('releases')
  if (releases === undefined || releases.length === 0) return undefined
  const all = () => Promise.all(releases.map((release) => release())).then(() => undefined)
  const res = c.res
  const type = res.headers.get('content-type') ?? ''
  // A JSON answer is complete when the handler returns; anything else (SSE, JSON lines) may still be producing.
  if (res.body === null || type.startsWith('application/json')) return all()
  c.res = new Response(releasing(res.body, all), res)
  return undefined
}

/**
 * The key's `rpm` and `concurrency` on every authenticated route (429 in the family's shape), and the release of every
 * concurrency slot a request holds once its response ended. A key without limits costs no DynamoDB call.
 */
export const rateLimits: MiddlewareHandler<AppEnv> = function rateLimits(c, next) {
  const { limits, keyId } = c.get('auth')
  if (limits === undefined || (limits.rpm === undefined && limits.concurrency === undefined)) return released(c, next)
  return admit([{ scope: keyScope(keyId), rpm: limits.rpm, concurrency: limits.concurrency }]).then((release) => {
    releaseAfterResponse(c, release)
    return released(c, next)
  })
}

// Runs the rest of the chain, then frees what the request holds (at once, or when a streamed body ends).
function released(c: Context<AppEnv>, next: Next): Promise<void> {
  return next().then(
    () => settle(c),
    (error: unknown) =>
      Promise.all((c.get('releases') ?? []).map((release) => release())).then(() => {
        throw error
      }),
  )
}
