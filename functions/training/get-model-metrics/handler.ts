import { createTrainingApp } from '#shared/http/create-app'
import { lambdaStreamHandler } from '#shared/http/lambda-stream'
import { validate } from '#shared/http/validate'
import { metricsHistory } from '#shared/training/metrics-history'
import { route } from './route.js'

/** `GET /v1/preview/models/{model_id}/metrics?split=&after_step=`: the model's logged metrics as plot-ready series. */
export const app = createTrainingApp().on(route.method, route.path, validate('query', route.query), async (c) => {
  const { split, after_step } = c.req.valid('query')
  const history = await metricsHistory(c.get('auth'), c.req.param('model_id'), {
    split,
    afterStep: after_step === undefined ? undefined : Number(after_step),
  })
  return c.json(history, 200)
})

export const handler = lambdaStreamHandler(app)
