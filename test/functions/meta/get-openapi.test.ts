import { describe, expect, expectTypeOf, it } from 'vitest'
import * as z from 'zod/mini'
import { route as modelsRoute } from '#functions/inference/list-models/route'
import { FUNCTIONS } from '#functions/manifest'
import { app, handler } from '#functions/meta/get-openapi/handler'
import { modelCard } from '#shared/inference/model-card'
import type { ModelCard } from '#shared/schemas/model-response'
import { lambdaContext, restEvent } from '../../support/events.js'

describe('GET /openapi.json', () => {
  it('documents every manifest route as OpenAPI 3.1 with security on authenticated routes', async () => {
    const res = await app.request('/openapi.json')
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, { security?: unknown }>> }
    expect(res.status).toBe(200)
    expect(doc.openapi).toBe('3.1.0')
    for (const entry of FUNCTIONS) {
      for (const route of entry.routes) {
        const path = route.path.replace(/:([A-Za-z_]+)/g, '{$1}')
        const operation = doc.paths[path]?.[route.method.toLowerCase()]
        expect(operation, `${route.method} ${route.path}`).toBeDefined()
        expect(operation?.security !== undefined).toBe(entry.auth)
      }
    }
  })

  it("documents each family's error shape, with Retry-After on 429 and 503", async () => {
    // Act
    const doc = (await (await app.request('/openapi.json')).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, Response> }>>
      components: { schemas: Record<string, { properties: Record<string, unknown> }> }
    }
    type Response = { headers?: Record<string, unknown>; content?: Record<string, { schema: { $ref: string } }> }
    const refOf = (r: Response | undefined) => r?.content?.['application/json']?.schema.$ref

    // Assess
    const chat = doc.paths['/v1/chat/completions']?.post?.responses ?? {}
    expect(refOf(chat['429'])).toBe('#/components/schemas/InferenceError')
    expect(chat['429']?.headers).toHaveProperty('Retry-After')
    expect(chat['503']?.headers).toHaveProperty('Retry-After')
    expect(refOf(doc.paths['/obj/read']?.post?.responses['4XX'])).toBe('#/components/schemas/TracingError')
    expect(refOf(doc.paths['/v1/preview/models/{model_id}/log']?.post?.responses['401'])).toBe(
      '#/components/schemas/TrainingError',
    )
    expect(doc.components.schemas.InferenceError?.properties).toHaveProperty('error')
    expect(doc.paths['/health']?.get?.responses).not.toHaveProperty('401')
  })

  it('documents the OTLP body in protobuf and JSON and its compression, the Idempotency-Key header and the redirects (QA F5)', async () => {
    // Act
    const doc = (await (await app.request('/openapi.json')).json()) as {
      paths: Record<string, Record<string, Operation>>
    }
    type Operation = {
      summary: string
      parameters: { name: string; in: string; required: boolean; schema: { enum?: string[]; pattern?: string } }[]
      requestBody?: { content: Record<string, { schema?: unknown }> }
      responses: Record<string, { headers?: Record<string, { description?: string }> }>
    }
    const header = (operation: Operation | undefined, name: string) =>
      operation?.parameters.find((p) => p.in === 'header' && p.name === name)

    // Assess: OTLP/HTTP's encodings, with the JSON schema on the JSON form only
    const otel = doc.paths['/otel/v1/traces']?.post
    expect(Object.keys(otel?.requestBody?.content ?? {})).toEqual([
      'application/json',
      'application/x-protobuf',
      'application/protobuf',
    ])
    expect(otel?.requestBody?.content['application/json']?.schema).toBeDefined()
    expect(otel?.requestBody?.content['application/x-protobuf']).toEqual({})
    expect(otel?.summary).toMatch(/gzip or deflate/)
    expect(header(otel, 'Content-Encoding')?.schema.enum).toEqual(expect.arrayContaining(['gzip', 'deflate']))
    expect(header(otel, 'project_id')?.required).toBe(false)
    // docs/training.md §4
    const log = header(doc.paths['/v1/preview/models/{model_id}/log']?.post, 'Idempotency-Key')
    expect(log).toMatchObject({ required: false, schema: { pattern: '^[\\x21-\\x7e]{1,255}$' } })
    // `GET /` and `GET /console` answer a redirect, never a page
    for (const path of ['/', '/console']) {
      const responses = doc.paths[path]?.get?.responses ?? {}
      expect(responses, path).not.toHaveProperty('200')
      expect(responses['302']?.headers?.Location?.description, path).toMatch(/^\/console\/ /)
    }
    expect(doc.paths['/console/{file}']?.get?.responses).toHaveProperty('200')
  })

  it("documents a card's max_model_len as null when an upstream model's entry sets none (QA F1)", async () => {
    // Prepare: an upstream model without `maxModelLen`, whose card says null (docs/inference.md §10)
    const card = modelCard({
      id: 'acme/upstream',
      backend: { kind: 'openai-compatible', baseUrl: 'http://127.0.0.1:1/v1' },
      entities: ['*'],
    })
    // The card's code and its schema are one shape: a schema that differs is a type error here.
    expectTypeOf(modelCard).returns.toEqualTypeOf<ModelCard>()

    // Act
    const doc = (await (await app.request('/openapi.json')).json()) as {
      paths: Record<string, Record<string, Operation>>
    }
    type Operation = { responses: Record<string, { content: Record<string, { schema: Items }> }> }
    type Items = { properties: { data: { items: { properties: Record<string, { type?: string | string[] }> } } } }
    const models = doc.paths['/v1/models']?.get?.responses['200']?.content['application/json']?.schema

    // Assess
    expect(card.max_model_len).toBeNull()
    expect(z.safeParse(modelsRoute.response, { object: 'list', data: [card] }).success).toBe(true)
    expect(models?.properties.data.items.properties.max_model_len?.type).toEqual(['number', 'null'])
  })

  it("documents the inference routes' headers, the streamed 200 and the statuses of docs/inference.md §4 (QA F9)", async () => {
    // Act
    const doc = (await (await app.request('/openapi.json')).json()) as {
      paths: Record<string, Record<string, Operation>>
    }
    type Operation = {
      parameters: { name: string; in: string; required: boolean; description: string }[]
      responses: Record<string, { description: string; content?: Record<string, { schema?: Schema }> }>
    }
    type Schema = { $ref?: string; properties?: Record<string, { const?: string }>; required?: string[] }
    const headers = (operation: Operation | undefined) =>
      operation?.parameters.filter((p) => p.in === 'header' && !p.required).map((p) => p.name)
    const chat = doc.paths['/v1/chat/completions']?.post
    const ok = chat?.responses['200']

    // Assess: the headers of docs/inference.md §1 and §10, §12
    expect(headers(chat)).toEqual(['OpenAI-Project', 'Compat-Project', 'X-Request-Id', 'Loom-Trace'])
    expect(chat?.parameters.find((p) => p.name === 'X-Request-Id')?.description).toContain('chatcmpl-<X-Request-Id>')
    expect(chat?.parameters.find((p) => p.name === 'Loom-Trace')?.description).toMatch(/^`off`/)
    expect(headers(doc.paths['/v1/models']?.get)).toEqual(['OpenAI-Project', 'Compat-Project'])
    expect(headers(doc.paths['/v1/usage']?.get)).toEqual(['OpenAI-Project', 'Compat-Project'])
    // A completion in JSON, or streamed as chunks (docs/inference.md §5, §6), from the schemas the code's types are
    expect(Object.keys(ok?.content ?? {})).toEqual(['application/json', 'text/event-stream'])
    expect(ok?.content?.['application/json']?.schema?.properties?.object?.const).toBe('chat.completion')
    expect(ok?.content?.['application/json']?.schema?.required).toContain('usage')
    expect(ok?.content?.['text/event-stream']?.schema?.properties?.object?.const).toBe('chat.completion.chunk')
    expect(ok?.description).toMatch(/`stream: true`.*data: \[DONE\]/)
    // docs/inference.md §4, in the family's error shape; 500 on every route of a family with an error shape
    for (const status of ['400', '401', '402', '403', '404', '422', '429', '500', '501', '503']) {
      expect(chat?.responses[status]?.content?.['application/json']?.schema?.$ref, status).toBe(
        '#/components/schemas/InferenceError',
      )
    }
    expect(chat?.responses['404']?.description).toMatch(/model/)
    expect(doc.paths['/obj/read']?.post?.responses['500']?.content?.['application/json']?.schema?.$ref).toBe(
      '#/components/schemas/TracingError',
    )
  })

  it('answers a REST API proxy event through the Lambda handler with the same document', async () => {
    // Prepare
    const expected = await (await app.request('/openapi.json')).json()

    // Act
    const result = await handler(restEvent({ path: '/openapi.json' }), lambdaContext())

    // Assess
    expect(result.statusCode).toBe(200)
    expect(result.multiValueHeaders?.['content-type']?.[0]).toContain('application/json')
    expect(JSON.parse(result.body)).toEqual(expected)
  })
})
