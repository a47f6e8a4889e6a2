import { describe, expect, it } from 'vitest'
import { decodeProtobufRequest } from '#shared/otel/otlp-protobuf'
import { at, protobufBody, recordSpans } from '../../support/otel.js'

describe('decodeProtobufRequest', () => {
  it('stores NaN and the infinities as the strings Weave writes for them (nan, inf, -inf)', async () => {
    // Prepare
    const spans = await recordSpans((tracer) => {
      tracer
        .startSpan('scores', {
          startTime: at(0),
          attributes: {
            nan: Number.NaN,
            inf: Number.POSITIVE_INFINITY,
            ninf: Number.NEGATIVE_INFINITY,
            ok: 0.25,
            list: [Number.NaN, 1.5],
          },
        })
        .end(at(1))
    })

    // Act
    const attributes = decodeProtobufRequest(protobufBody(spans))[0]?.scopeSpans[0]?.spans[0]?.attributes

    // Assess
    expect(attributes).toEqual([
      ['nan', 'nan'],
      ['inf', 'inf'],
      ['ninf', '-inf'],
      ['ok', 0.25],
      ['list', ['nan', 1.5]],
    ])
  })
})
