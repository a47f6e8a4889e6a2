import { handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { CallsQueryStatsReqSchema } from '#shared/schemas/call'
import { callsQueryStats } from '#shared/tracing/call-stats'

/** `POST /calls/query_stats`: count (capped at `limit`), `has_more` and optional total storage size. */
export const app = createTracingApp().post(
  '/calls/query_stats',
  validate('json', CallsQueryStatsReqSchema),
  async (c) => {
    return c.json(await callsQueryStats(c.req.valid('json')), 200)
  },
)

export const handler = handle(app)
