import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
import { MetricsHistorySchema, MetricsQuerySchema } from '#shared/schemas/training-log'

/** `GET /v1/preview/models/:model_id/metrics`: the route training/get-model-metrics serves. */
export const route = declareRoute({
  id: 'training/get-model-metrics',
  family: 'training',
  access: 'read',
  // Streams: the Console reads the whole history, which no limit or page narrows (every log is at step 0,
  // docs/training.md §5.3), so past Lambda's 6 MB buffered limit it must still arrive (docs/architecture.md,
  // "Streamed answers").
  stream: true,
  auth: true,
  method: 'GET',
  path: '/v1/preview/models/:model_id/metrics',
  summary: "A model's logged metrics as plot-ready series",
  query: MetricsQuerySchema,
  response: MetricsHistorySchema,
  example: { params: { model_id: EXAMPLE_IDS.modelId }, query: { split: 'train', after_step: '10' } },
})
