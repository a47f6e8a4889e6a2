import { createTrainingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { toModelView } from '#shared/schemas/preview-model'
import { listModels } from '#shared/training/preview-models'
import { route } from './route.js'

/** `GET /v1/preview/models`: the models of the caller's entities, optionally one entity's or project's. */
export const app = createTrainingApp().on(route.method, route.path, validate('query', route.query), async (c) => {
  const models = await listModels(c.get('auth'), c.req.valid('query'))
  return c.json({ data: models.map(toModelView) }, 200)
})

export const handler = lambdaHandler(app)
