import { createInferenceApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { validate } from '#shared/http/validate'
import { assertSingleValues } from '#shared/inference/usage-query'
import { usageReport } from '#shared/inference/usage-report'
import { route } from './route.js'

const PARAMS = Object.keys(route.query.shape)

/** `GET /v1/usage?project=&start=&end=`: metered gateway usage per hour, project and model, with costs. */
export const app = createInferenceApp().on(
  route.method,
  route.path,
  // Before validation: the validator would see a repeated parameter as an array and call it missing.
  async function singleValues(c, next) {
    assertSingleValues(c.req.queries(), PARAMS)
    await next()
  },
  validate('query', route.query),
  async (c) => {
    const report = await usageReport(c.req.valid('query'), c.get('auth'), c.get('project'))
    return c.json(report, 200)
  },
)

export const handler = lambdaHandler(app)
