import { SpanStatusCode } from '@opentelemetry/api'
import { describe, expect, it } from 'vitest'
import { app as feedbackApp } from '#functions/tracing/create-feedback/handler'
import { app, handler } from '#functions/tracing/export-otel-traces/handler'
import { app as statsApp } from '#functions/tracing/query-call-stats/handler'
import { app as queryApp } from '#functions/tracing/stream-query-calls/handler'
import { app as usageApp } from '#functions/tracing/trace-usage/handler'
import { jsonInit, newCaller, type TestCaller } from '../../support/auth.js'
import { authorizerFor, newProject } from '../../support/calls.js'
import { lambdaContext, restEvent } from '../../support/events.js'
import {
  at,
  idsOf,
  jsonBody,
  otlpInit,
  protobufBody,
  protobufResponse,
  recordSpans,
  under,
} from '../../support/otel.js'

const PATH = '/otel/v1/traces'

// biome-ignore lint/suspicious/noExplicitAny: calls are checked field by field by the assertions.
type Call = any

async function calls(caller: TestCaller, project: string, filter: Record<string, unknown> = {}): Promise<Call[]> {
  const res = await queryApp.request(
    '/calls/stream_query',
    jsonInit({ project_id: project, filter, sort_by: [{ field: 'started_at', direction: 'asc' }] }, caller.basic),
  )
  expect(res.status).toBe(200)
  return (await res.text())
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l))
}

async function count(caller: TestCaller, project: string): Promise<number> {
  const res = await statsApp.request('/calls/query_stats', jsonInit({ project_id: project }, caller.basic))
  return ((await res.json()) as { count: number }).count
}

/** A root span with two children, the second of which has a child of its own and fails. */
function tree() {
  return recordSpans((tracer) => {
    const root = tracer.startSpan('agent.run', { startTime: at(0), attributes: { 'app.user': 'u-1' } })
    const plan = tracer.startSpan('plan', { startTime: at(10) }, under(root))
    plan.end(at(20))
    const act = tracer.startSpan('act', { startTime: at(30) }, under(root))
    const tool = tracer.startSpan('tool.search', { startTime: at(40), attributes: { 'tool.query': 'q' } }, under(act))
    tool.end(at(50))
    act.setStatus({ code: SpanStatusCode.ERROR, message: 'tool failed' })
    act.end(at(60))
    root.end(at(100))
  })
}

describe('POST /otel/v1/traces', () => {
  it('stores a protobuf export as a call tree and answers a protobuf ExportTraceServiceResponse', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const spans = await tree()
    const [root, plan, act, tool] = ['agent.run', 'plan', 'act', 'tool.search'].map((n) =>
      idsOf(spans.find((s) => s.name === n) as (typeof spans)[number]),
    ) as ReturnType<typeof idsOf>[]

    // Act
    const res = await app.request(PATH, otlpInit(protobufBody(spans), caller, project))

    // Assess
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/x-protobuf')
    expect(protobufResponse(new Uint8Array(await res.arrayBuffer()))).toEqual({})
    const stored = await calls(caller, project)
    expect(stored.map((c) => [c.op_name, c.id, c.parent_id, c.trace_id])).toEqual([
      ['agent.run', root?.spanId, null, root?.traceId],
      ['plan', plan?.spanId, root?.spanId, root?.traceId],
      ['act', act?.spanId, root?.spanId, root?.traceId],
      ['tool.search', tool?.spanId, act?.spanId, root?.traceId],
    ])
    const [rootCall, , actCall] = stored
    expect(rootCall.started_at).toBe('2025-01-02T03:04:05Z')
    expect(rootCall.ended_at).toBe('2025-01-02T03:04:05.100000Z')
    expect(rootCall.summary.weave).toMatchObject({ status: 'success', latency_ms: 100 })
    expect(actCall.exception).toBe('tool failed')
    expect(actCall.summary.weave.status).toBe('error')
    // No convention matched: every span attribute is kept, nested by its dots, with the span as received.
    expect(rootCall.attributes).toMatchObject({ app: { user: 'u-1' } })
    expect(rootCall.attributes.otel_span).toMatchObject({
      name: 'agent.run',
      kind: 'INTERNAL',
      context: { trace_id: root?.traceId, span_id: root?.spanId },
      status: { code: 'UNSET' },
      resource: { attributes: { service: { name: 'otel-test' } } },
      scope: { name: 'test-scope', version: '1.2.3' },
    })
  })

  it('accepts OTLP/JSON with hex ids and answers in JSON', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const spans = await tree()

    // Act
    const res = await app.request(PATH, otlpInit(jsonBody(spans), caller, project))

    // Assess
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^application\/json/)
    expect(await res.json()).toEqual({})
    const stored = await calls(caller, project)
    expect(stored.map((c) => c.op_name)).toEqual(['agent.run', 'plan', 'act', 'tool.search'])
    expect(stored[3].parent_id).toBe(stored[2].id)
  })

  it('accepts a gzip body and Bearer credentials', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const spans = await tree()

    // Act
    const res = await app.request(
      PATH,
      otlpInit(protobufBody(spans), caller, project, { gzip: true, headers: caller.bearer }),
    )

    // Assess
    expect(res.status).toBe(200)
    expect(await count(caller, project)).toBe(4)
  })

  it('never duplicates calls when an exporter re-sends a batch', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const body = protobufBody(await tree())

    // Act
    const first = await app.request(PATH, otlpInit(body, caller, project))
    const second = await app.request(PATH, otlpInit(body, caller, project))

    // Assess
    expect([first.status, second.status]).toEqual([200, 200])
    expect(await count(caller, project)).toBe(4)
    expect(await calls(caller, project)).toHaveLength(4)
  })

  it('stores a trace sent child first over several requests as it stores it in one batch', async () => {
    // Prepare
    const caller = await newCaller()
    const [oneBatch, split] = [newProject(caller), newProject(caller)]
    const spans = await tree()

    // Act
    await app.request(PATH, otlpInit(protobufBody(spans), caller, oneBatch))
    for (const span of [...spans].reverse()) {
      const res = await app.request(PATH, otlpInit(protobufBody([span]), caller, split))
      expect(res.status).toBe(200)
    }

    // Assess
    const strip = (c: Call) => ({ ...c, project_id: undefined })
    expect((await calls(caller, split)).map(strip)).toEqual((await calls(caller, oneBatch)).map(strip))
    expect(await count(caller, split)).toBe(4)
  })

  it('routes spans by the wandb.entity and wandb.project resource attributes without a header', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const [entity, name] = project.split('/') as [string, string]
    const spans = await recordSpans((tracer) => tracer.startSpan('routed', { startTime: at(0) }).end(at(1)), {
      'wandb.entity': entity,
      'wandb.project': name,
    })

    // Act
    const res = await app.request(PATH, otlpInit(protobufBody(spans), caller, undefined))

    // Assess
    expect(res.status).toBe(200)
    expect((await calls(caller, project)).map((c) => c.op_name)).toEqual(['routed'])
  })

  it('stores calls that take feedback, count in query_stats and roll up their usage in trace/usage', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const spans = await recordSpans((tracer) => {
      const root = tracer.startSpan('agent', { startTime: at(0) })
      const llm = tracer.startSpan(
        'chat',
        {
          startTime: at(1),
          attributes: {
            'gen_ai.response.model': 'gpt-4o',
            'gen_ai.usage.input_tokens': 1000,
            'gen_ai.usage.output_tokens': 100,
          },
        },
        under(root),
      )
      llm.end(at(2))
      root.end(at(3))
    })
    const [llm, root] = spans.map(idsOf) as [ReturnType<typeof idsOf>, ReturnType<typeof idsOf>]
    await app.request(PATH, otlpInit(protobufBody(spans), caller, project))

    // Act
    const feedback = await feedbackApp.request(
      '/feedback/create',
      jsonInit(
        {
          project_id: project,
          weave_ref: `weave:///${project}/call/${llm.spanId}`,
          feedback_type: 'wandb.reaction.1',
          payload: { emoji: '👍' },
        },
        caller.basic,
      ),
    )
    const usage = await usageApp.request(
      '/trace/usage',
      jsonInit({ project_id: project, include_costs: true }, caller.basic),
    )
    const [, chat] = await calls(caller, project, {})
    const withFeedback = await queryApp.request(
      '/calls/stream_query',
      jsonInit({ project_id: project, filter: { call_ids: [llm.spanId] }, include_feedback: true }, caller.basic),
    )

    // Assess
    expect(feedback.status).toBe(200)
    expect(chat.summary.usage).toEqual({ 'gpt-4o': { input_tokens: 1000, output_tokens: 100, total_tokens: 1100 } })
    const rolled = ((await usage.json()) as { call_usage: Record<string, Record<string, Call>> }).call_usage
    // gpt-4o's built-in price: 2.5e-6 per prompt token, 1e-5 per completion token.
    expect(rolled[root.spanId]?.['gpt-4o']).toMatchObject({
      prompt_tokens: 1000,
      completion_tokens: 100,
      total_tokens: 1100,
    })
    expect(rolled[root.spanId]?.['gpt-4o'].prompt_tokens_total_cost).toBeCloseTo(0.0025, 10)
    expect(rolled[root.spanId]?.['gpt-4o'].completion_tokens_total_cost).toBeCloseTo(0.001, 10)
    const [withRows] = (await withFeedback.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
    expect(withRows.summary.weave.feedback).toMatchObject([
      { feedback_type: 'wandb.reaction.1', payload: { emoji: '👍' } },
    ])
    expect(await count(caller, project)).toBe(2)
  })

  it('stores an error span without a status message with an empty exception, as Weave does', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const spans = await recordSpans((tracer) => {
      const failing = tracer.startSpan('tool.fetch', { startTime: at(0) })
      failing.recordException(new TypeError('fetch failed'), at(1))
      failing.setStatus({ code: SpanStatusCode.ERROR })
      failing.end(at(2))
    })

    // Act
    const res = await app.request(PATH, otlpInit(protobufBody(spans), caller, project))

    // Assess
    expect(res.status).toBe(200)
    const [stored] = await calls(caller, project)
    expect(stored.exception).toBe('')
    expect(stored.summary.weave.status).toBe('error')
    expect(stored.attributes.otel_span.events).toMatchObject([
      { name: 'exception', attributes: { exception: { type: 'TypeError', message: 'fetch failed' } } },
    ])
  })

  it('reads Langfuse times sent as OTLP integers as epoch nanoseconds and doubles as epoch seconds', async () => {
    // Prepare: the JS SDK sends integers as intValue and other numbers as doubleValue
    const caller = await newCaller()
    const project = newProject(caller)
    const spans = await recordSpans((tracer) => {
      tracer
        .startSpan('sdk', {
          startTime: at(0),
          attributes: { 'langfuse.startTime': 1_000_000_000, 'langfuse.endTime': 2.5 },
        })
        .end(at(1))
    })
    const json = JSON.parse(jsonBody(await recordSpans((tracer) => tracer.startSpan('json').end())))
    json.resourceSpans[0].scopeSpans[0].spans[0].attributes = [
      { key: 'langfuse.startTime', value: { intValue: '1735787044123456789' } },
      { key: 'langfuse.endTime', value: { doubleValue: 1735787046 } },
    ]

    // Act
    const fromProtobuf = await app.request(PATH, otlpInit(protobufBody(spans), caller, project))
    const fromJson = await app.request(PATH, otlpInit(JSON.stringify(json), caller, project))

    // Assess
    expect([fromProtobuf.status, fromJson.status]).toEqual([200, 200])
    const stored = await calls(caller, project)
    expect(stored.map((c) => [c.op_name, c.started_at, c.ended_at])).toEqual([
      ['sdk', '1970-01-01T00:00:01Z', '1970-01-01T00:00:02.500000Z'],
      ['json', '2025-01-02T03:04:04.123456Z', '2025-01-02T03:04:06Z'],
    ])
  })

  it('stores 64-bit times and integers sent as JSON numbers exactly, as their string form (QA F1)', async () => {
    // Prepare: the protobuf JSON mapping lets 64-bit integers be numbers; these are past 2^53, where a double would
    // round …456999 ns up to the next microsecond and 2^53 + 1 to 2^53.
    const caller = await newCaller()
    const project = newProject(caller)
    const exportOf = (spanId: string, q: (digits: string) => string) =>
      `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"5b8efff798038103d269b633813fc60c",` +
      `"spanId":"${spanId}","name":"s${spanId.slice(-1)}","startTimeUnixNano":${q('1735787044123456999')},` +
      `"endTimeUnixNano":${q('1735787045999999999')},` +
      `"attributes":[{"key":"big","value":{"intValue":${q('9007199254740993')}}}]}]}]}]}`

    // Act
    const asNumbers = await app.request(
      PATH,
      otlpInit(
        exportOf('eee19b7ec3c1b171', (d) => d),
        caller,
        project,
      ),
    )
    const asStrings = await app.request(
      PATH,
      otlpInit(
        exportOf('eee19b7ec3c1b172', (d) => `"${d}"`),
        caller,
        project,
      ),
    )

    // Assess
    expect([asNumbers.status, asStrings.status]).toEqual([200, 200])
    const stored = await calls(caller, project)
    expect(stored.map((c) => [c.op_name, c.started_at, c.ended_at, c.attributes.otel_span.attributes.big])).toEqual([
      ['s1', '2025-01-02T03:04:04.123456Z', '2025-01-02T03:04:05.999999Z', '9007199254740993'],
      ['s2', '2025-01-02T03:04:04.123456Z', '2025-01-02T03:04:05.999999Z', '9007199254740993'],
    ])
  })

  it('answers the Lambda handler with the protobuf response for a base64 body', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const spans = await tree()
    const event = {
      ...restEvent({
        method: 'POST',
        path: PATH,
        headers: { 'content-type': 'application/x-protobuf', project_id: project, ...caller.basic },
        body: Buffer.from(protobufBody(spans)).toString('base64'),
        authorizer: authorizerFor(caller),
      }),
      isBase64Encoded: true,
    }

    // Act
    const result = await handler(event, lambdaContext())

    // Assess
    expect(result.statusCode).toBe(200)
    expect(JSON.stringify(result.headers ?? result.multiValueHeaders)).toMatch(/application\/x-protobuf/)
    expect(result.isBase64Encoded).toBe(true)
    expect(await count(caller, project)).toBe(4)
  })
})

describe('POST /otel/v1/traces refusals', () => {
  it('answers 400 without a project, 403 for another entity and 401 without credentials', async () => {
    // Prepare
    const caller = await newCaller()
    const other = await newCaller()
    const body = protobufBody(await tree())

    // Act
    const missing = await app.request(PATH, otlpInit(body, caller, undefined))
    const foreign = await app.request(PATH, otlpInit(body, caller, newProject(other)))
    const anonymous = await app.request(PATH, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf', project_id: newProject(caller) },
      body: Buffer.from(body),
    })

    // Assess
    expect(missing.status).toBe(400)
    expect(((await missing.json()) as { reason: string }).reason).toMatch(/project_id/)
    expect(foreign.status).toBe(403)
    expect(await foreign.json()).toEqual({ reason: `You do not have access to entity '${other.entity}'` })
    expect(anonymous.status).toBe(401)
    expect(await count(other, newProject(other))).toBe(0)
  })

  it('answers 403 for a header naming another entity even when no span uses it: none sent, or resources naming their own (QA)', async () => {
    // Prepare: the resource attributes win over the header, so the second export's spans would go to the caller's own
    // project; the header still names a project the caller cannot open.
    const caller = await newCaller()
    const other = await newCaller()
    const own = newProject(caller)
    const [entity, project] = own.split('/')
    const attributed = JSON.stringify({
      resourceSpans: [
        {
          resource: {
            attributes: [
              { key: 'wandb.entity', value: { stringValue: entity } },
              { key: 'wandb.project', value: { stringValue: project } },
            ],
          },
          scopeSpans: [{ scope: { name: 's' }, spans: [] }],
        },
      ],
    })

    // Act
    const empty = await app.request(PATH, otlpInit(JSON.stringify({ resourceSpans: [] }), caller, newProject(other)))
    const noBody = await app.request(PATH, otlpInit('{}', caller, newProject(other)))
    const ownAttributes = await app.request(PATH, otlpInit(attributed, caller, newProject(other)))
    const malformed = await app.request(PATH, otlpInit('{}', caller, 'no-slash'))

    // Assess
    for (const res of [empty, noBody, ownAttributes]) {
      expect(res.status).toBe(403)
      expect(await res.json()).toEqual({ reason: `You do not have access to entity '${other.entity}'` })
    }
    expect(malformed.status).toBe(400)
  })

  it('answers 415 for a content type OTLP/HTTP does not define, and for none', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const body = protobufBody(await tree())

    // Act
    const text = await app.request(PATH, otlpInit(body, caller, project, { contentType: 'text/plain' }))
    const none = await app.request(PATH, {
      method: 'POST',
      headers: { project_id: project, ...caller.basic },
      body: Buffer.from(body),
    })

    // Assess
    expect(text.status).toBe(415)
    expect(((await text.json()) as { reason: string }).reason).toMatch(/application\/x-protobuf/)
    expect(none.status).toBe(415)
    expect(await count(caller, project)).toBe(0)
  })

  it('answers 400 for a truncated protobuf body, malformed JSON and a corrupt gzip body, storing nothing', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const spans = await tree()
    const body = protobufBody(spans)

    // Act
    const truncated = await app.request(PATH, otlpInit(body.slice(0, body.length - 7), caller, project))
    const json = await app.request(PATH, otlpInit('{"resourceSpans": [', caller, project))
    const shape = await app.request(PATH, otlpInit('{"resourceSpans": {"spans": 1}}', caller, project))
    // OTLP/JSON whose bytes are not UTF-8 (a Latin-1 service name): FastAPI's 400, not text with replacement characters.
    const latin1 = Buffer.from(
      '{"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "caf\xe9"}}]}, "scopeSpans": []}]}',
      'latin1',
    )
    const notUtf8 = await app.request(
      PATH,
      otlpInit(new Uint8Array(latin1), caller, project, { contentType: 'application/json' }),
    )
    const gzip = await app.request(PATH, {
      ...otlpInit(body, caller, project),
      headers: {
        'content-type': 'application/x-protobuf',
        'content-encoding': 'gzip',
        project_id: project,
        ...caller.basic,
      },
    })

    // Assess
    expect(truncated.status).toBe(400)
    expect(((await truncated.json()) as { reason: string }).reason).toMatch(/Invalid OTLP protobuf body/)
    expect(json.status).toBe(400)
    expect(shape.status).toBe(400)
    expect(notUtf8.status).toBe(400)
    expect(await notUtf8.json()).toEqual({ reason: 'There was an error parsing the body' })
    expect(gzip.status).toBe(400)
    expect(await count(caller, project)).toBe(0)
  })

  it('answers 413 when a small gzip body inflates past the body limit', async () => {
    // Prepare
    const caller = await newCaller()
    const project = newProject(caller)
    const bomb = new Uint8Array(64 * 1024 * 1024)

    // Act
    const res = await app.request(PATH, otlpInit(bomb, caller, project, { gzip: true }))

    // Assess
    expect(res.status).toBe(413)
    expect(await res.json()).toEqual({ reason: 'Request too large' })
  })
})
