import * as z from 'zod/mini'
import type { RouteDoc } from '#shared/http/openapi'

// OTLP/JSON's outline (field by field in the OTLP specification); the same message also comes as
// `application/x-protobuf`, optionally gzip-compressed.
const OtlpJsonRequestSchema = z.object({
  resourceSpans: z.array(
    z.looseObject({
      resource: z.optional(z.looseObject({ attributes: z.optional(z.array(z.looseObject({ key: z.string() }))) })),
      scopeSpans: z.array(
        z.looseObject({ spans: z.array(z.looseObject({ traceId: z.string(), spanId: z.string() })) }),
      ),
    }),
  ),
})

const OtlpJsonResponseSchema = z.object({
  partialSuccess: z.optional(z.object({ rejectedSpans: z.string(), errorMessage: z.string() })),
})

/** OpenAPI descriptions of the OpenTelemetry ingest route. */
export const OTEL_DOCS: Record<string, RouteDoc> = {
  'POST /otel/v1/traces': {
    summary:
      'OTLP/HTTP trace export (application/x-protobuf or application/json, optionally gzip); project from the ' +
      '`project_id: <entity>/<project>` header. Each span becomes a call; spans not stored are counted in partialSuccess',
    body: OtlpJsonRequestSchema,
    response: OtlpJsonResponseSchema,
  },
}
