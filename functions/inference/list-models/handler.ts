import { createInferenceApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { modelsFor } from '#shared/inference/catalog'
import { modelCard } from '#shared/inference/model-card'
import { route } from './route.js'

/** `GET /v1/models`: the catalog models the caller's entity may use. */
export const app = createInferenceApp().on(route.method, route.path, async (c) => {
  const models = await modelsFor(c.get('project').entity)
  return c.json({ object: 'list', data: models.map(modelCard) }, 200)
})

export const handler = lambdaHandler(app)
