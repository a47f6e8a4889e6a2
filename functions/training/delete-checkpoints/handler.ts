import { createTrainingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { deleteCheckpoints } from '#shared/training/checkpoints'
import { route } from './route.js'

/** `DELETE /v1/preview/models/{model_id}/checkpoints` `{steps}`: deletes nothing and says so (Loom does not train). */
export const app = createTrainingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const { steps } = c.req.valid('json')
  return c.json(await deleteCheckpoints(c.get('auth'), c.req.param('model_id'), steps), 200)
})

export const handler = lambdaHandler(app)
