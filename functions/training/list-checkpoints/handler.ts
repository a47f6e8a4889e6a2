import { createTrainingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { listCheckpoints } from '#shared/training/checkpoints'
import { route } from './route.js'

/** `GET /v1/preview/models/{model_id}/checkpoints?after=&limit=&order=`: an empty cursor page (Loom does not train). */
export const app = createTrainingApp().on(route.method, route.path, validate('query', route.query), async (c) => {
  return c.json(await listCheckpoints(c.get('auth'), c.req.param('model_id')), 200)
})

export const handler = lambdaHandler(app)
