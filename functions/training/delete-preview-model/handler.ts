import { createTrainingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { removeModel } from '#shared/training/preview-models'
import { route } from './route.js'

/** `DELETE /v1/preview/models/{model_id}`: deletes one of the caller's models (404 when unknown or foreign). */
export const app = createTrainingApp().on(route.method, route.path, async (c) => {
  const model = await removeModel(c.get('auth'), c.req.param('model_id'))
  return c.json({ id: model.id, deleted: true }, 200)
})

export const handler = lambdaHandler(app)
