import { createTrainingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { toModelView } from '#shared/schemas/preview-model'
import { registerModel } from '#shared/training/preview-models'
import { route } from './route.js'

/** `POST /v1/preview/models`: registers a model (ART `register()`), returning an existing one on request. */
export const app = createTrainingApp().on(route.method, route.path, validate('json', route.body), async (c) => {
  const { model } = await registerModel(c.get('auth'), c.req.valid('json'))
  return c.json(toModelView(model), 200)
})

export const handler = lambdaHandler(app)
