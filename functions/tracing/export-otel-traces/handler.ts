import { createTracingApp } from '#shared/http/create-app'
import { lambdaHandler } from '#shared/http/lambda-handler'
import { requestHeader } from '#shared/http/node-bindings'
import { exportTraces } from '#shared/otel/export-traces'
import { readOtlpRequest } from '#shared/otel/otlp-body'
import { jsonResponse } from '#shared/otel/otlp-json'
import { encodeProtobufResponse } from '#shared/otel/otlp-protobuf'
import { route } from './route.js'

/**
 * `POST /otel/v1/traces`: an OTLP/HTTP trace export (protobuf or JSON, optionally gzip) stored as calls in the project
 * of the `project_id` header (or the `wandb.entity`/`wandb.project` resource attributes). Answers an
 * `ExportTraceServiceResponse` in the request's encoding, with `partial_success` for spans that were not stored.
 */
export const app = createTracingApp().on(route.method, route.path, async (c) => {
  const request = await readOtlpRequest(c)
  const { rejected, message } = await exportTraces(c.get('auth'), request.resourceSpans, requestHeader(c, 'project_id'))
  if (request.encoding === 'json') return c.json(jsonResponse(rejected, message), 200)
  return c.body(encodeProtobufResponse(rejected, message), 200, { 'Content-Type': 'application/x-protobuf' })
})

export const handler = lambdaHandler(app)
