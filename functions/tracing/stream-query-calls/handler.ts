import { createTracingApp } from '#shared/http/create-app'
import { lambdaStreamHandler } from '#shared/http/lambda-stream'
import { validate } from '#shared/http/validate'
import { objectRefReader } from '#shared/tracing/call-expand'
import { renderCalls } from '#shared/tracing/call-ops'
import { iterateCalls } from '#shared/tracing/call-query'
import type { LoadedCall } from '#shared/tracing/call-view'
import { stringifyJsonExact } from '#shared/tracing/json-exact'
import { route } from './route.js'

// The response media type follows `Accept` (docs/tracing.md §1), JSON Lines by default.
function mediaType(accept: string | undefined): string {
  const first = accept?.split(',', 1)[0]?.split(';', 1)[0]?.trim()
  return first === undefined || first === '' || first.includes('*') ? 'application/jsonl' : first
}

/** `POST /calls/stream_query`: matching calls as JSON Lines, one `CallSchema` per line. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const req = c.req.valid('json')
  // Filters and sorts compare plain numbers; the lines keep expanded objects' numbers exact (docs/tracing.md §8.1).
  const refs = objectRefReader(req.project_id)
  const exactRefs = objectRefReader(req.project_id, { exactNumbers: true })
  const chunks = iterateCalls({
    project: req.project_id,
    filter: req.filter,
    query: req.query,
    sortBy: req.sort_by,
    offset: req.offset,
    limit: req.limit,
    expandColumns: req.expand_columns,
    columns: req.columns,
    refs,
  })
  // Lines are rendered and sent as the index walk reaches them; an error before the first line is still a JSON error.
  const first = await chunks.next()
  const encoder = new TextEncoder()
  const render = async (calls: LoadedCall[]) =>
    encoder.encode(
      (await renderCalls(req.project_id, calls, req, exactRefs)).map((r) => `${stringifyJsonExact(r)}\n`).join(''),
    )
  const firstBytes = first.done ? undefined : await render(first.value)
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      if (firstBytes !== undefined) controller.enqueue(firstBytes)
    },
    async pull(controller) {
      if (first.done) return controller.close()
      const next = await chunks.next()
      if (next.done) return controller.close()
      controller.enqueue(await render(next.value))
    },
  })
  return c.body(body, 200, { 'content-type': mediaType(c.req.header('accept')) })
})

export const handler = lambdaStreamHandler(app)
