import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { TraceUsageReqSchema } from '#shared/schemas/call'
import { UsageResSchema } from '#shared/schemas/call-response'

/** `POST /trace/usage`: the route tracing/trace-usage serves. */
export const route = declareRoute({
  id: 'tracing/trace-usage',
  family: 'tracing',
  access: 'read',
  auth: true,
  method: 'POST',
  path: '/trace/usage',
  summary: 'Per-call LLM usage with descendants',
  body: TraceUsageReqSchema,
  response: UsageResSchema,
  example: {
    body: { project_id: EXAMPLE_IDS.projectId, filter: { trace_ids: [EXAMPLE_IDS.traceId] }, include_costs: true },
  },
})
