import { createTrainingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { readJsonBodyWithElements } from '#shared/http/read-json'
import { GROUPS_KEY, parseLogInput } from '#shared/training/log-input'
import { traceTrainingLog } from '#shared/training/log-trace'
import { logTrajectories } from '#shared/training/log-trajectories'
import { route } from './route.js'

/**
 * `POST /v1/preview/models/{model_id}/log`: validates trajectory groups, stores them whole, answers the metrics.
 * The body is validated here rather than through `validate()` because the stored groups must be the JSON text as sent
 * (re-serialising the parsed groups would round integers above 2^53 and turn `1.0` into `1`).
 */
export const app = createTrainingApp().on(route.method, route.path, async (c) => {
  const startedAt = new Date()
  const body = await readJsonBodyWithElements(c, GROUPS_KEY)
  const input = parseLogInput(c.req.param('model_id'), body, c.req.header('idempotency-key'))
  const outcome = await logTrajectories(c.get('auth'), input, startedAt)
  await traceTrainingLog(outcome, c.get('auth'))
  return c.json(outcome.response, 200)
})

export const handler = lambdaHandler(app)
