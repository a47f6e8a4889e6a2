import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { updateItemProgress } from '#shared/tracing/annotation-queue-items'
import { route } from './route.js'

/** `POST /annotation_queues/{queue_id}/items/{item_id}/progress`: the authenticated annotator's state on an item. */
export const app = createTracingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const body = c.req.valid('json')
  const item = await updateItemProgress(
    c.get('auth').userId,
    body.project_id,
    c.req.param('queue_id'),
    c.req.param('item_id'),
    body.annotation_state,
  )
  return c.json({ item }, 200)
})

export const handler = lambdaHandler(app)
