import { describe, expect, it } from 'vitest'
import { decodeJsonRequest } from '#shared/otel/otlp-json'
import { at, jsonBody, recordSpans } from '../../support/otel.js'

const TRACE_ID = '0af7651916cd43dd8448eb211c80319c'

// An export of one span whose attributes are the given `KeyValue`s, as JSON text.
function exportOf(attributes: { key: string; value: unknown }[]): string {
  const span = { traceId: TRACE_ID, spanId: 'b7ad6b7169203331', name: 's', attributes }
  return JSON.stringify({ resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] })
}

const attributesOf = (text: string) => decodeJsonRequest(text)[0]?.scopeSpans[0]?.spans[0]?.attributes

describe('decodeJsonRequest', () => {
  it('reads the null the JS exporter writes for a NaN or infinite double as an unset value', async () => {
    // Prepare
    const spans = await recordSpans((tracer) => {
      tracer
        .startSpan('scores', {
          startTime: at(0),
          attributes: { nan: Number.NaN, inf: Number.POSITIVE_INFINITY, ok: 1.5 },
        })
        .end(at(1))
    })

    // Act
    const attributes = attributesOf(jsonBody(spans))

    // Assess
    expect(jsonBody(spans)).toContain('"doubleValue":null')
    expect(attributes).toEqual([
      ['nan', null],
      ['inf', null],
      ['ok', 1.5],
    ])
  })

  it('reads null members of an AnyValue as unset, in either spelling, and takes the member that is set', () => {
    // Act
    const attributes = attributesOf(
      exportOf([
        { key: 'd', value: { doubleValue: null } },
        { key: 's', value: { stringValue: null } },
        { key: 'b', value: { bool_value: null, bytes_value: null } },
        { key: 'i', value: { stringValue: null, intValue: '7' } },
        { key: 'n', value: null },
      ]),
    )

    // Assess
    expect(attributes).toEqual([
      ['d', null],
      ['s', null],
      ['b', null],
      ['i', 7],
      ['n', null],
    ])
  })

  it('stores the special doubles of the protobuf JSON mapping as the reference stores them from protobuf', () => {
    // Prepare
    const text = exportOf([
      { key: 'nan', value: { doubleValue: 'NaN' } },
      { key: 'inf', value: { doubleValue: 'Infinity' } },
      { key: 'ninf', value: { doubleValue: '-Infinity' } },
      { key: 'huge', value: { doubleValue: 'HUGE' } },
      { key: 'list', value: { arrayValue: { values: [{ doubleValue: 'NaN' }, { doubleValue: '2.5' }] } } },
    ])

    // Act: a number literal past the double range, as JSON text allows
    const attributes = attributesOf(text.replace('"HUGE"', '1e400'))

    // Assess
    expect(attributes).toEqual([
      ['nan', 'nan'],
      ['inf', 'inf'],
      ['ninf', '-inf'],
      ['huge', 'inf'],
      ['list', ['nan', 2.5]],
    ])
  })
})
