import type * as z from 'zod/mini'
import {
  CreatePreviewModelReqSchema,
  DeletePreviewModelResSchema,
  ListPreviewModelsQuerySchema,
  ListPreviewModelsResSchema,
  PreviewModelViewSchema,
} from '#shared/schemas/preview-model'
import {
  LogRequestSchema,
  LogResponseSchema,
  MetricsHistorySchema,
  MetricsQuerySchema,
} from '#shared/schemas/training-log'

/** An OpenAPI route description: summary and the zod schemas of body, query and JSON response. */
export type TrainingRouteDoc = {
  summary: string
  body?: z.core.$ZodType
  query?: z.core.$ZodType
  response?: z.core.$ZodType
}

/** OpenAPI descriptions of the training routes, keyed `"<METHOD> <path>"` as in `functions/manifest.ts`. */
export const TRAINING_ROUTE_DOCS: Record<string, TrainingRouteDoc> = {
  'POST /v1/preview/models': {
    summary: 'Register a preview model (returns the existing one with return_existing)',
    body: CreatePreviewModelReqSchema,
    response: PreviewModelViewSchema,
  },
  'GET /v1/preview/models': {
    summary: "List the caller's preview models",
    query: ListPreviewModelsQuerySchema,
    response: ListPreviewModelsResSchema,
  },
  'DELETE /v1/preview/models/:model_id': { summary: 'Delete a preview model', response: DeletePreviewModelResSchema },
  'POST /v1/preview/models/:model_id/log': {
    summary: 'Log trajectories and calculate metrics',
    body: LogRequestSchema,
    response: LogResponseSchema,
  },
  'GET /v1/preview/models/:model_id/metrics': {
    summary: "A model's logged metrics as plot-ready series",
    query: MetricsQuerySchema,
    response: MetricsHistorySchema,
  },
}
