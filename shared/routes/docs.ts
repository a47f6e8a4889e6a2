import * as z from 'zod/mini'
import type { RouteDoc } from '#shared/http/openapi'
import { CONSOLE_DOCS } from '#shared/routes/console-docs'
import { INFERENCE_DOCS } from '#shared/routes/inference-docs'
import { OTEL_DOCS } from '#shared/routes/otel-docs'
import { TRACING_CALLS_DOCS } from '#shared/routes/tracing-calls-docs'
import { TRACING_OBJECTS_DOCS } from '#shared/routes/tracing-objects-docs'
import { TRAINING_ROUTE_DOCS } from '#shared/training/route-docs'

/**
 * The OpenAPI description of every route, keyed by `"<METHOD> <path>"` as in `functions/manifest.ts`, pointing at
 * the same zod schemas the handlers validate with. `test/functions/manifest.test.ts` fails when a route lacks one.
 */
export const ROUTE_DOCS: Record<string, RouteDoc> = {
  'GET /health': { summary: 'Liveness probe', response: z.object({ status: z.literal('ok') }) },
  'GET /openapi.json': { summary: 'This OpenAPI 3.1 document' },
  ...TRAINING_ROUTE_DOCS,
  ...INFERENCE_DOCS,
  ...TRACING_CALLS_DOCS,
  ...TRACING_OBJECTS_DOCS,
  ...OTEL_DOCS,
  ...CONSOLE_DOCS,
}
