import { streamHandle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { CallsQueryReqSchema } from '#shared/schemas/call'
import { renderCalls } from '#shared/tracing/call-ops'
import { selectCalls } from '#shared/tracing/call-query'

const LINES_PER_CHUNK = 100

// The response media type follows `Accept` (contract §1), JSON Lines by default.
function mediaType(accept: string | undefined): string {
  const first = accept?.split(',', 1)[0]?.split(';', 1)[0]?.trim()
  return first === undefined || first === '' || first.includes('*') ? 'application/jsonl' : first
}

/** `POST /calls/stream_query`: matching calls as JSON Lines, one `CallSchema` per line. */
export const app = createTracingApp().post('/calls/stream_query', validate('json', CallsQueryReqSchema), async (c) => {
  const req = c.req.valid('json')
  const calls = await selectCalls({
    project: req.project_id,
    filter: req.filter,
    query: req.query,
    sortBy: req.sort_by,
    offset: req.offset,
    limit: req.limit,
  })
  const encoder = new TextEncoder()
  let at = 0
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (at >= calls.length) return controller.close()
      const rows = await renderCalls(req.project_id, calls.slice(at, at + LINES_PER_CHUNK), req)
      at += LINES_PER_CHUNK
      controller.enqueue(encoder.encode(rows.map((r) => `${JSON.stringify(r)}\n`).join('')))
    },
  })
  return c.body(body, 200, { 'content-type': mediaType(c.req.header('accept')) })
})

export const handler = streamHandle(app)
