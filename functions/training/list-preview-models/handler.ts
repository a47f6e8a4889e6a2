import { handle } from 'hono/aws-lambda'
import { createTrainingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { ListPreviewModelsQuerySchema, toModelView } from '#shared/schemas/preview-model'
import { listModels } from '#shared/training/preview-models'

/** `GET /v1/preview/models`: the models of the caller's entities, optionally one entity's or project's. */
export const app = createTrainingApp().get(
  '/v1/preview/models',
  validate('query', ListPreviewModelsQuerySchema),
  async (c) => {
    const models = await listModels(c.get('auth'), c.req.valid('query'))
    return c.json({ data: models.map(toModelView) }, 200)
  },
)

export const handler = handle(app)
