import { handle } from 'hono/aws-lambda'
import { createTrainingApp } from '#shared/http/create-app'
import { validate } from '#shared/http/validate'
import { CreatePreviewModelReqSchema, toModelView } from '#shared/schemas/preview-model'
import { registerModel } from '#shared/training/preview-models'

/** `POST /v1/preview/models`: registers a model (ART `register()`), returning an existing one on request. */
export const app = createTrainingApp().post(
  '/v1/preview/models',
  validate('json', CreatePreviewModelReqSchema),
  async (c) => {
    const { model } = await registerModel(c.get('auth'), c.req.valid('json'))
    return c.json(toModelView(model), 200)
  },
)

export const handler = handle(app)
