import * as z from 'zod/mini'

/**
 * OTLP/JSON's outline (field by field in the OTLP specification), for the OpenAPI document; the same message also
 * comes as `application/x-protobuf`, optionally gzip-compressed, and is decoded by `shared/otel/otlp-body.ts`.
 */
export const OtlpJsonRequestSchema = z.object({
  resourceSpans: z.array(
    z.looseObject({
      resource: z.optional(z.looseObject({ attributes: z.optional(z.array(z.looseObject({ key: z.string() }))) })),
      scopeSpans: z.array(
        z.looseObject({ spans: z.array(z.looseObject({ traceId: z.string(), spanId: z.string() })) }),
      ),
    }),
  ),
})

/** `POST /otel/v1/traces` JSON answer (`ExportTraceServiceResponse`). */
export const OtlpJsonResponseSchema = z.object({
  partialSuccess: z.optional(z.object({ rejectedSpans: z.string(), errorMessage: z.string() })),
})
export type OtlpJsonResponse = z.infer<typeof OtlpJsonResponseSchema>
