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
  it('keeps every digit of 64-bit values sent as JSON numbers, in both spellings, as their string form does', () => {
    // Prepare: values past 2^53, which JSON.parse alone would round (…999 to …7024, 2^53 + 1 to 2^53)
    const span = (q: (digits: string) => string) =>
      `{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"${TRACE_ID}","spanId":"b7ad6b7169203331",` +
      `"startTimeUnixNano":${q('1735787044123456999')},"end_time_unix_nano":${q('1735787045999999999')},` +
      `"events":[{"timeUnixNano":${q('1735787044500000001')}},{"time_unix_nano":${q('1.7e18')}}],` +
      `"attributes":[{"key":"big","value":{"intValue":${q('9007199254740993')}}},` +
      `{"key":"min","value":{"int_value":${q('-9223372036854775808')}}},` +
      `{"key":"small","value":{"intValue":${q('180')}}}]}]}]}]}`
    const read = (text: string) => {
      const s = decodeJsonRequest(text)[0]?.scopeSpans[0]?.spans[0]
      return [s?.startNanos, s?.endNanos, s?.events.map((e) => e.timeNanos), s?.attributes, [...(s?.intKeys ?? [])]]
    }

    // Act
    const fromNumbers = read(span((digits) => digits))
    const fromStrings = read(span((digits) => `"${digits}"`))

    // Assess
    expect(fromNumbers).toEqual([
      1735787044123456999n,
      1735787045999999999n,
      [1735787044500000001n, 1700000000000000000n],
      [
        ['big', '9007199254740993'],
        ['min', '-9223372036854775808'],
        ['small', 180],
      ],
      ['big', 'min', 'small'],
    ])
    expect(fromStrings).toEqual(fromNumbers)
  })

  it('leaves a string attribute holding 64-bit members as text untouched', () => {
    // Prepare
    const text = '{"intValue": 9007199254740993, "startTimeUnixNano": 1735787044123456999} and "timeUnixNano":1.5'

    // Act
    const attributes = attributesOf(exportOf([{ key: 'note', value: { stringValue: text } }]))

    // Assess
    expect(attributes).toEqual([['note', text]])
  })

  it('refuses a fractional, negative or out-of-range 64-bit value, as a number or as text', () => {
    // Prepare
    const withStart = (value: string) =>
      `{"resourceSpans":[{"scopeSpans":[{"spans":[{"startTimeUnixNano":${value}}]}]}]}`
    const withInt = (value: string) => exportOf([{ key: 'n', value: { intValue: 0 } }]).replace('0}', `${value}}`)

    // Act
    const refusals = [
      ...['1.5', '-1', '1735787044123456999.5', '18446744073709551616', '1e20', '"-1"', '"1.5"'].map(withStart),
      ...['0.5', '9223372036854775808', '-9223372036854775809', '"1e19"'].map(withInt),
    ].map((text) => {
      try {
        decodeJsonRequest(text)
        return 'accepted'
      } catch (error) {
        return (error as Error).message
      }
    })

    // Assess
    expect(refusals).toEqual([
      ...Array(7).fill('Invalid OTLP JSON body: startTimeUnixNano must be an unsigned 64-bit integer'),
      ...Array(4).fill('Invalid OTLP JSON body: intValue must be a 64-bit integer'),
    ])
  })
})
