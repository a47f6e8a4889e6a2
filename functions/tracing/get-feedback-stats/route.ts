import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { FeedbackStatsResSchema } from '#shared/schemas/feedback-response'
import { FeedbackStatsReqSchema } from '#shared/schemas/feedback-stats'

/** `POST /feedback/stats`: the route tracing/get-feedback-stats serves. */
export const route = declareRoute({
  id: 'tracing/get-feedback-stats',
  family: 'tracing',
  access: 'read',
  auth: true,
  method: 'POST',
  path: '/feedback/stats',
  summary: 'Time-bucketed feedback statistics',
  body: FeedbackStatsReqSchema,
  response: FeedbackStatsResSchema,
  example: {
    body: {
      project_id: EXAMPLE_IDS.projectId,
      start: '2026-11-20T00:00:00Z',
      end: '2026-11-27T00:00:00Z',
      feedback_type: 'wandb.runnable.faithfulness',
      granularity: 86400,
      metrics: [
        { json_path: 'output.score', value_type: 'numeric', aggregations: ['avg', 'count'], percentiles: [50, 90] },
      ],
    },
  },
})
