import { declareRoute } from '#shared/routes/declare'
import { OtlpJsonRequestSchema, OtlpJsonResponseSchema } from '#shared/schemas/otlp'

/** `POST /otel/v1/traces`: the route tracing/export-otel-traces serves. */
export const route = declareRoute({
  id: 'tracing/export-otel-traces',
  family: 'tracing',
  access: 'write',
  auth: true,
  method: 'POST',
  path: '/otel/v1/traces',
  summary:
    'OTLP/HTTP trace export (application/x-protobuf or application/json, optionally gzip); project from the ' +
    '`project_id: <entity>/<project>` header. Each span becomes a call; spans not stored are counted in partialSuccess',
  body: OtlpJsonRequestSchema,
  response: OtlpJsonResponseSchema,
})
