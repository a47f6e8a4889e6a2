import { describe, expect, it } from 'vitest'
import { CALL_COLUMNS, CALL_STATUSES } from '../../console/src/lib/calls.js'
import { routeHash } from '../../console/src/lib/route.js'
import { DEFAULT_VIEW, parseTracesView, type TracesView, tracesViewParams } from '../../console/src/lib/traces-view.js'

const parse = (query: string) => parseTracesView(new URLSearchParams(query))

const FULL: TracesView = {
  filters: {
    op: 'rag pipeline & co/ü?',
    status: 'descendant_error',
    from: '2025-03-01T12:30',
    to: '2025-03-02T08:00:15',
    text: 'Tell me about "Loom"',
    rootsOnly: false,
  },
  sort: { column: 'latency', direction: 'asc' },
  offset: 150,
}

describe('tracesViewParams', () => {
  it('leaves every default out, so the plain link stays the plain link', () => {
    // Act
    const params = tracesViewParams(DEFAULT_VIEW)

    // Assess
    expect(params).toEqual({})
    expect(routeHash('traces', [], params, 'acme/bot')).toBe('#/acme/bot/traces')
  })

  it('names each value that is not the default with a short parameter', () => {
    expect(tracesViewParams(FULL)).toEqual({
      op: 'rag pipeline & co/ü?',
      status: 'descendant_error',
      from: '2025-03-01T12:30',
      to: '2025-03-02T08:00:15',
      q: 'Tell me about "Loom"',
      roots: '0',
      sort: 'latency',
      dir: 'asc',
      offset: '150',
    })
    expect(tracesViewParams({ ...DEFAULT_VIEW, sort: { column: 'op', direction: 'desc' } })).toEqual({ sort: 'op' })
    expect(tracesViewParams({ ...DEFAULT_VIEW, sort: { column: 'started', direction: 'asc' } })).toEqual({ dir: 'asc' })
  })
})

describe('parseTracesView', () => {
  it('reads no query as the default view', () => {
    expect(parse('')).toEqual(DEFAULT_VIEW)
  })

  it('round-trips a view through a route hash, characters a URL encodes included', () => {
    // Prepare
    const hash = routeHash('traces', [], tracesViewParams(FULL), 'acme/my bot')

    // Act
    const view = parse(hash.slice(hash.indexOf('?') + 1))

    // Assess
    expect(view).toEqual(FULL)
  })

  it.each([...CALL_STATUSES])('reads the status %s', (status) => {
    expect(parse(`status=${status}`).filters.status).toBe(status)
  })

  it.each(CALL_COLUMNS.map((c) => c.id))('reads the sort column %s', (column) => {
    expect(parse(`sort=${column}&dir=asc`).sort).toEqual({ column, direction: 'asc' })
  })

  it.each([
    ['a negative offset', 'offset=-3'],
    ['a fractional offset', 'offset=1.5'],
    ['an offset in exponent form', 'offset=1e3'],
    ['an offset past nine digits', 'offset=1234567890'],
    ['an empty offset', 'offset='],
    ['an unknown sort column', 'sort=nonsense'],
    ['an unknown direction', 'dir=sideways'],
    ['an unknown status', 'status=weird'],
    ['a From that is no datetime-local value', 'from=yesterday'],
    ['a To in another format', 'to=2025-03-01T12:30:00Z'],
    ['an impossible date', 'from=2025-13-45T99:99'],
    ['a roots value other than 0', 'roots=maybe'],
    ['an unknown parameter', 'page=7&x=%E0%A4%A'],
  ])('reads %s as the default', (_, query) => {
    expect(parse(query)).toEqual(DEFAULT_VIEW)
  })

  it('keeps the valid values beside invalid ones', () => {
    // Act
    const view = parse('op=agent&status=weird&sort=cost&dir=up&offset=-50&roots=0')

    // Assess
    expect(view).toEqual({
      filters: { ...DEFAULT_VIEW.filters, op: 'agent', rootsOnly: false },
      sort: { column: 'cost', direction: 'desc' },
      offset: 0,
    })
  })
})
