import { describe, expect, it } from 'vitest'
import type { AttrValue, OtelEvent, OtelSpan } from '#shared/otel/otlp-model'
import { safeTree } from '#shared/otel/span-dump'
import { opNameOf, SpanRejectedError, spanToCall } from '#shared/otel/span-to-call'

const PROJECT = 'acme/otel'
const START = 1_735_787_045_123_456_789n // 2025-01-02T03:04:05.123456789Z

// Integers are sent as OTLP intValue, other numbers as doubleValue, as the OpenTelemetry JS SDK encodes them.
const integerKeys = (attributes: Record<string, AttrValue>) =>
  new Set(Object.keys(attributes).filter((k) => Number.isInteger(attributes[k])))

function span(attributes: Record<string, AttrValue>, fields: Partial<OtelSpan> = {}): OtelSpan {
  return {
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    parentSpanId: '',
    traceState: '',
    flags: 1,
    name: 'chat gpt-4o',
    kind: 3,
    startNanos: START,
    endNanos: START + 1_500_000_000n,
    attributes: Object.entries(attributes),
    intKeys: integerKeys(attributes),
    droppedAttributesCount: 0,
    events: [],
    droppedEventsCount: 0,
    links: [],
    droppedLinksCount: 0,
    status: { code: 0, message: '' },
    ...fields,
  }
}

const origin = {
  resource: { attributes: [['service.name', 'svc']] as [string, AttrValue][], droppedAttributesCount: 0 },
  resourceTree: safeTree([['service.name', 'svc']]),
  scope: { name: 'scope', version: '1.0', attributes: [], droppedAttributesCount: 0 },
  scopeTree: {},
}

const map = (s: OtelSpan) => spanToCall(s, PROJECT, origin)
const event = (name: string, attributes: Record<string, AttrValue>): OtelEvent => ({
  timeNanos: START,
  name,
  attributes: Object.entries(attributes),
  droppedAttributesCount: 0,
})

describe('spanToCall', () => {
  it('keeps the span ids and times as the call ids and times', () => {
    // Act
    const { start, end } = map(span({}, { parentSpanId: '00f067aa0ba902b7' }))

    // Assess
    expect(start).toMatchObject({
      project_id: PROJECT,
      id: 'b7ad6b7169203331',
      trace_id: '0af7651916cd43dd8448eb211c80319c',
      parent_id: '00f067aa0ba902b7',
      op_name: 'chat gpt-4o',
      started_at: '2025-01-02T03:04:05.123456Z',
    })
    expect(end).toMatchObject({ id: 'b7ad6b7169203331', ended_at: '2025-01-02T03:04:06.623456Z', exception: null })
  })

  it('maps OpenTelemetry GenAI semantic conventions: messages, model, usage keyed by the response model', () => {
    // Prepare
    const messages = [{ role: 'user', parts: [{ type: 'text', content: 'Hi' }] }]
    const attrs = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.response.model': 'gpt-4o-2024-08-06',
      'gen_ai.request.temperature': 0.2,
      'gen_ai.input.messages': JSON.stringify(messages),
      'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'Hello' }] }]),
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.usage.output_tokens': 3,
      'gen_ai.usage.cache_read.input_tokens': 4,
      'gen_ai.conversation.id': 'conv-1',
    }

    // Act
    const { start, end } = map(span(attrs))

    // Assess
    expect(start.inputs).toEqual({ 'gen_ai.input.messages': messages })
    expect(end.output).toEqual({
      'gen_ai.output.messages': [{ role: 'assistant', parts: [{ type: 'text', content: 'Hello' }] }],
    })
    expect(start.attributes).toMatchObject({
      model: 'gpt-4o-2024-08-06',
      provider: 'openai',
      operation_name: 'chat',
      model_parameters: { model: 'gpt-4o', temperature: 0.2 },
    })
    expect(end.summary).toEqual({
      usage: {
        'gpt-4o-2024-08-06': { input_tokens: 12, output_tokens: 3, cache_read_input_tokens: 4, total_tokens: 15 },
      },
    })
    // A GenAI conversation is a Weave thread, and each of its spans a turn.
    expect(start).toMatchObject({ thread_id: 'conv-1', turn_id: 'b7ad6b7169203331' })
  })

  it('maps OpenInference: input.value and output.value (JSON parsed), llm.model_name and llm.token_count.*', () => {
    // Prepare
    const attrs = {
      'openinference.span.kind': 'LLM',
      'llm.model_name': 'loom/reference-1',
      'llm.system': 'openai',
      'llm.invocation_parameters': '{"max_tokens":8}',
      'input.value': '{"messages":[{"role":"user","content":"Hi"}]}',
      'input.mime_type': 'application/json',
      'output.value': 'plain text answer',
      'llm.token_count.prompt': 9,
      'llm.token_count.completion': 4,
      'llm.token_count.total': 13,
    }

    // Act
    const { start, end } = map(span(attrs))

    // Assess
    expect(start.inputs).toEqual({ 'input.value': { messages: [{ role: 'user', content: 'Hi' }] } })
    expect(end.output).toEqual({ 'output.value': 'plain text answer' })
    expect(start.attributes).toEqual({
      kind: 'LLM',
      model: 'loom/reference-1',
      system: 'openai',
      model_parameters: { max_tokens: 8 },
    })
    expect(end.summary).toEqual({
      usage: { 'loom/reference-1': { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 } },
    })
  })

  it('keeps JSON text with leading whitespace as text in inputs, output and model_parameters, as Weave does', () => {
    // Prepare: Weave parses only text starting with `{` or `[` (`expand_attributes`), everywhere alike.
    const attrs = {
      'llm.model_name': 'm',
      'llm.invocation_parameters': ' {"temperature": 0.5}',
      'input.value': ' {"q": 1}',
      'output.value': '\n[1, 2]',
    }

    // Act
    const { start, end } = map(span(attrs))

    // Assess
    expect(start.inputs).toEqual({ 'input.value': ' {"q": 1}' })
    expect(end.output).toEqual({ 'output.value': '\n[1, 2]' })
    expect(start.attributes).toMatchObject({ model_parameters: ' {"temperature": 0.5}' })
  })

  it('maps OpenLLMetry: gen_ai.prompt.N.* and gen_ai.completion.N.* lists, llm.usage.* counts', () => {
    // Prepare
    const attrs = {
      'traceloop.span.kind': 'llm',
      'gen_ai.system': 'OpenAI',
      'gen_ai.request.model': 'gpt-4',
      'gen_ai.prompt.0.role': 'system',
      'gen_ai.prompt.0.content': 'Be brief',
      'gen_ai.prompt.1.role': 'user',
      'gen_ai.prompt.1.content': 'Hi',
      'gen_ai.completion.0.role': 'assistant',
      'gen_ai.completion.0.content': 'Hello',
      'gen_ai.usage.prompt_tokens': '7',
      'gen_ai.usage.completion_tokens': 2,
      'llm.usage.total_tokens': 9,
    }

    // Act
    const { start, end } = map(span(attrs))

    // Assess
    expect(start.inputs).toEqual({
      'gen_ai.prompt': [
        { role: 'system', content: 'Be brief' },
        { role: 'user', content: 'Hi' },
      ],
    })
    expect(end.output).toEqual({ 'gen_ai.completion': [{ role: 'assistant', content: 'Hello' }] })
    expect(end.summary).toEqual({ usage: { 'gpt-4': { prompt_tokens: 7, completion_tokens: 2, total_tokens: 9 } } })
    expect(start.attributes).toMatchObject({ kind: 'llm', system: 'OpenAI', model: 'gpt-4' })
  })

  it('lets weave.* attributes override the GenAI ones, and wandb.* set display name, thread, turn and custom attributes', () => {
    // Prepare
    const attrs = {
      'gen_ai.response.model': 'gpt-4o',
      'weave.response.model': 'my-finetune',
      'gen_ai.usage.input_tokens': 1,
      'weave.usage.input_tokens': 100,
      'weave.usage.output_tokens': 50,
      'wandb.display_name': 'Nice name',
      'wandb.thread_id': 'thread-7',
      'wandb.is_turn': true,
      'wandb.attributes': { env: 'prod', priority: 3 } as AttrValue,
    }

    // Act
    const { start, end } = map(span(attrs))

    // Assess
    expect(start).toMatchObject({ display_name: 'Nice name', thread_id: 'thread-7', turn_id: 'b7ad6b7169203331' })
    expect(start.attributes).toMatchObject({ model: 'my-finetune', env: 'prod', priority: 3 })
    expect(end.summary).toEqual({
      usage: { 'my-finetune': { input_tokens: 100, output_tokens: 50, total_tokens: 150 } },
    })
  })

  it('merges wandb.attributes sent as JSON text, and stores other JSON text attributes as objects', () => {
    // Act
    const tagged = map(span({ 'input.value': 'q', 'wandb.attributes': '{"tag":"x","n":1}' }))
    const generic = map(span({ 'my.payload': '{"a":1,"b":[1,2]}', 'my.list': '[1,2,3]' }))

    // Assess
    expect(tagged.start.attributes).toEqual({ tag: 'x', n: 1 })
    expect(generic.start.attributes).toEqual({ my: { payload: { a: 1, b: [1, 2] }, list: [1, 2, 3] } })
    expect(generic.start.otel_dump).toMatchObject({ attributes: generic.start.attributes })
  })

  it('takes inputs and output from GenAI message events when no attribute carries them', () => {
    // Prepare
    const events = [
      event('gen_ai.system.message', { content: 'Be brief' }),
      event('gen_ai.user.message', { content: 'Hi' }),
      event('gen_ai.choice', { index: 0, finish_reason: 'stop', message: '{"role":"assistant","content":"Hello"}' }),
    ]

    // Act
    const { start, end } = map(span({ 'gen_ai.request.model': 'gemini' }, { events }))

    // Assess
    expect(start.inputs).toEqual({
      'gen_ai.input.messages': [
        { role: 'system', content: 'Be brief' },
        { role: 'user', content: 'Hi' },
      ],
    })
    expect(end.output).toEqual({
      'gen_ai.output.messages': [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Hello' } }],
    })
  })

  it('keeps every attribute when no convention applies, and de-nests generic input/output objects', () => {
    // Act
    const plain = map(span({ 'http.method': 'GET', 'http.status_code': 200 }))
    const generic = map(span({ 'input.query': 'q', 'input.k': 3, output: 'done' }))

    // Assess
    expect(plain.start.attributes).toEqual({ http: { method: 'GET', status_code: 200 } })
    expect(plain.start.inputs).toEqual({})
    expect(generic.start.inputs).toEqual({ query: 'q', k: 3 })
    expect(generic.end.output).toBe('done')
  })

  it('turns an error status into the exception: its message, empty when it has none, as Weave stores it', () => {
    // Act
    const withMessage = map(span({}, { status: { code: 2, message: 'rate limited' } }))
    const withEvent = map(
      span(
        {},
        {
          status: { code: 2, message: '' },
          events: [event('exception', { 'exception.type': 'TimeoutError', 'exception.message': 'took too long' })],
        },
      ),
    )
    const bare = map(span({}, { status: { code: 2, message: '' } }))
    const ok = map(span({}, { status: { code: 1, message: 'fine' } }))

    // Assess
    expect(withMessage.end.exception).toBe('rate limited')
    expect(withEvent.end.exception).toBe('')
    expect(withEvent.start.otel_dump).toMatchObject({
      events: [{ name: 'exception', attributes: { exception: { type: 'TimeoutError', message: 'took too long' } } }],
    })
    expect(bare.end.exception).toBe('')
    expect(ok.end.exception).toBeNull()
  })

  it('uses Langfuse start and end time attributes when present', () => {
    // Act: a 64-bit integer past 2^53 arrives as decimal text, with its key among the span's intKeys
    const { start, end } = map(
      span(
        { 'langfuse.startTime': '2024-05-06T07:08:09.5Z', 'langfuse.endTime': '1715000000123456789' },
        {
          intKeys: new Set(['langfuse.endTime']),
        },
      ),
    )

    // Assess
    expect(start.started_at).toBe('2024-05-06T07:08:09.5Z')
    expect(end.ended_at).toBe('2024-05-06T12:53:20.123456Z')
  })

  it('reads Langfuse integer times as epoch nanoseconds and doubles as epoch seconds, as Weave does', () => {
    // Act
    const integer = map(span({ 'langfuse.startTime': 1_715_000_000, 'langfuse.endTime': 1_715_000_000.25 }))
    const wholeDouble = map(span({ 'langfuse.startTime': 1_715_000_000 }, { intKeys: new Set() }))
    const nested = map(span({ langfuse: '{"startTime": 1715000000, "endTime": 1715000001.5}' }))
    const numericText = map(span({ 'langfuse.startTime': '1715000000', 'langfuse.endTime': '1715000000000000000' }))

    // Assess
    expect(integer.start.started_at).toBe('1970-01-01T00:00:01.715000Z')
    expect(integer.end.ended_at).toBe('2024-05-06T12:53:20.250000Z')
    expect(wholeDouble.start.started_at).toBe('2024-05-06T12:53:20.000000Z')
    expect(nested.start.started_at).toBe('1970-01-01T00:00:01.715000Z')
    expect(nested.end.ended_at).toBe('2024-05-06T12:53:21.500000Z')
    // Text that is not ISO is no time for `datetime.fromisoformat`: the span's own times stay.
    expect(numericText.start.started_at).toBe('2025-01-02T03:04:05.123456Z')
    expect(numericText.end.ended_at).toBe('2025-01-02T03:04:06.623456Z')
  })

  it('derives total_tokens only from a prompt/completion or an input/output pair, as Weave does', () => {
    // Act
    const mixed = map(span({ 'gen_ai.usage.prompt_tokens': 10, 'gen_ai.usage.output_tokens': 5 }))
    const crossed = map(span({ 'gen_ai.usage.input_tokens': 10, 'llm.token_count.completion': 5 }))
    const both = map(
      span({
        'gen_ai.usage.prompt_tokens': 10,
        'gen_ai.usage.completion_tokens': 5,
        'gen_ai.usage.input_tokens': 100,
        'gen_ai.usage.output_tokens': 50,
      }),
    )

    // Assess
    expect(mixed.end.summary).toEqual({ usage: { usage: { prompt_tokens: 10, output_tokens: 5 } } })
    expect(crossed.end.summary).toEqual({ usage: { usage: { input_tokens: 10, completion_tokens: 5 } } })
    expect(both.end.summary).toEqual({
      usage: {
        usage: { prompt_tokens: 10, completion_tokens: 5, input_tokens: 100, output_tokens: 50, total_tokens: 15 },
      },
    })
  })

  it("reads token counts given as text as Python's int() and Weave's usage schema do", () => {
    // Act
    const integers = map(span({ 'gen_ai.usage.input_tokens': ' +12 ', 'gen_ai.usage.output_tokens': '1_000' }))
    const decimals = map(span({ 'gen_ai.usage.input_tokens': '12.0', 'gen_ai.usage.output_tokens': 3 }))
    const fraction = map(span({ 'gen_ai.usage.input_tokens': '12.7', 'gen_ai.usage.output_tokens': 'many' }))
    const doubles = map(span({ 'gen_ai.usage.input_tokens': 12.7, 'gen_ai.usage.output_tokens': 3 }))

    // Assess
    expect(integers.end.summary).toEqual({
      usage: { usage: { input_tokens: 12, output_tokens: 1000, total_tokens: 1012 } },
    })
    // Weave derives the total from ints only: "12.0" is still text then (its schema reads it as 12 later).
    expect(decimals.end.summary).toEqual({ usage: { usage: { input_tokens: 12, output_tokens: 3 } } })
    // Weave's schema refuses "12.7" and fails the export; Loom keeps the whole part (docs/otel.md).
    expect(fraction.end.summary).toEqual({ usage: { usage: { input_tokens: 12 } } })
    // A double goes through int(), which truncates: 12.7 is 12.
    expect(doubles.end.summary).toEqual({ usage: { usage: { input_tokens: 12, output_tokens: 3, total_tokens: 15 } } })
  })

  it('rejects spans with malformed ids or times', () => {
    // Assess
    for (const bad of [
      { traceId: 'abc' },
      { traceId: '0'.repeat(32) },
      { spanId: '0'.repeat(16) },
      { parentSpanId: 'xyz' },
      { startNanos: 0n },
      { endNanos: START - 1n },
    ]) {
      expect(() => map(span({}, bad))).toThrow(SpanRejectedError)
    }
    expect(map(span({}, { parentSpanId: '0'.repeat(16) })).start.parent_id).toBeNull()
  })

  it('shortens op names past 128 characters as Weave does, keeping different long names apart', () => {
    // Prepare: expected values from Weave's Span.to_call (shorten_name with ':' and 4 hex digits of the SHA-256)
    const dotted = Array.from({ length: 30 }, (_, i) => `seg${i}`).join('.')

    // Act
    const names = [
      `GET /api/${'a'.repeat(200)}`,
      `GET /api/${'a'.repeat(199)}b`,
      'a'.repeat(138),
      dotted,
      'b'.repeat(128),
    ]
    const [x, y, plain, segments, exact] = names.map(opNameOf)

    // Assess
    expect(x).toBe('GET /api:8b42')
    expect(x).not.toBe(y)
    expect(plain).toBe(`${'a'.repeat(123)}:d2c5`)
    expect(segments).toBe(`${dotted.slice(0, dotted.indexOf('.seg22'))}:4f16`)
    expect(exact).toBe('b'.repeat(128))
    expect(opNameOf(`${'😀'.repeat(100)} ${'😀'.repeat(40)}`)).toBe(`${'😀'.repeat(100)}:8747`)
    expect(opNameOf('short')).toBe('short')
    expect(opNameOf('')).toBe('unnamed_span')
  })

  it('shortens display names past 1,024 characters as Weave does, at a word where it can', () => {
    // Prepare
    const words = Array.from({ length: 300 }, (_, i) => `w${i}`).join(' ')
    const named = (display: string) => map(span({ 'wandb.display_name': display })).start.display_name

    // Act
    const [exact, long, spaced] = [named('x'.repeat(1024)), named('y'.repeat(1100)), named(words)]

    // Assess
    expect(exact).toBe('x'.repeat(1024))
    expect(long).toBe(`${'y'.repeat(1021)}...`)
    expect(spaced).toBe(`${words.slice(0, words.indexOf(' w226'))} ...`)
  })
})
