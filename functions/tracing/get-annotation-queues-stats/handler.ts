import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { queueStats } from '#shared/tracing/annotation-queues'
import { route } from './route.js'

/** `POST /annotation_queues/stats`: total and completed items per requested queue. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const req = c.req.valid('json')
  return c.json(await queueStats(req.project_id, req.queue_ids), 200)
})

export const handler = lambdaHandler(app)
