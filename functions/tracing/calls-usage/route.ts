import { declareRoute } from '#shared/routes/declare'
import { CallsUsageReqSchema } from '#shared/schemas/call'
import { UsageResSchema } from '#shared/schemas/call-response'

/** `POST /calls/usage`: the route tracing/calls-usage serves. */
export const route = declareRoute({
  id: 'tracing/calls-usage',
  family: 'tracing',
  access: 'read',
  auth: true,
  method: 'POST',
  path: '/calls/usage',
  summary: 'Complete LLM usage of given calls',
  body: CallsUsageReqSchema,
  response: UsageResSchema,
})
