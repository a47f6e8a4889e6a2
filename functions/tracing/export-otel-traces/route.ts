import * as z from 'zod/mini'
import { declareRoute } from '#shared/routes/declare'
import { EXAMPLE_IDS } from '#shared/routes/example-ids'
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
    'OTLP/HTTP trace export (application/x-protobuf, the default of most exporters, or application/json; optionally ' +
    'gzip or deflate compressed); project from the `project_id: <entity>/<project>` header. Each span becomes a ' +
    'call; spans not stored are counted in partialSuccess',
  body: OtlpJsonRequestSchema,
  // The schema and example are OTLP/JSON's; protobuf carries the same ExportTraceServiceRequest.
  bodyMediaTypes: ['application/json', 'application/x-protobuf', 'application/protobuf'],
  headers: [
    {
      name: 'project_id',
      description:
        'The project, `<entity>/<project>`; a resource setting both `wandb.entity` and `wandb.project` attributes ' +
        'routes its spans there instead (docs/otel.md)',
    },
    {
      name: 'Content-Encoding',
      description: 'The body compression, when compressed; another coding is 415',
      schema: z.enum(['gzip', 'x-gzip', 'deflate', 'identity']),
    },
  ],
  response: OtlpJsonResponseSchema,
  example: {
    // The project comes from the `project_id` header; one span, timestamps in Unix nanoseconds as strings.
    body: {
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'summarizer' } }] },
          scopeSpans: [
            {
              scope: { name: 'my-instrumentation' },
              spans: [
                {
                  traceId: '5b8efff798038103d269b633813fc60c',
                  spanId: 'eee19b7ec3c1b174',
                  name: 'summarize',
                  kind: 1,
                  startTimeUnixNano: '1795780800000000000',
                  endTimeUnixNano: '1795780801250000000',
                  attributes: [{ key: 'gen_ai.request.model', value: { stringValue: EXAMPLE_IDS.model } }],
                },
              ],
            },
          ],
        },
      ],
    },
  },
})
