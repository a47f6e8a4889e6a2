import { handle } from 'hono/aws-lambda'
import { createTracingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { QueuesStatsReqSchema } from '#shared/schemas/annotation-queue'
import { queueStats } from '#shared/tracing/annotation-queues'

/** `POST /annotation_queues/stats`: total and completed items per requested queue. */
export const app = createTracingApp().post(
  '/annotation_queues/stats',
  validate('json', QueuesStatsReqSchema),
  async (c) => {
    const req = c.req.valid('json')
    return c.json(await queueStats(req.project_id, req.queue_ids), 200)
  },
)

export const handler = handle(app)
