import { declareRoute } from '#shared/routes/declare'
import { LogRequestSchema, LogResponseSchema } from '#shared/schemas/training-log'

/** `POST /v1/preview/models/:model_id/log`: the route training/log-trajectories serves. */
export const route = declareRoute({
  id: 'training/log-trajectories',
  family: 'training',
  access: 'write',
  auth: true,
  method: 'POST',
  path: '/v1/preview/models/:model_id/log',
  summary: 'Log trajectories and calculate metrics',
  body: LogRequestSchema,
  response: LogResponseSchema,
})
