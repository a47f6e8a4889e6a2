// What the Traces page shows (filters, sort, page) as the query of its route, so Back from a trace, a reload or a copied
// link shows the same list: `#/<entity>/<project>/traces?op=…&status=…&from=…&to=…&q=…&roots=0&sort=…&dir=…&offset=…`.
// Defaults are left out (the plain link stays `#/<entity>/<project>/traces`); a value the page could not show falls
// back to its default, so a hand-edited or stale link never breaks the page.

// A `.js` path: the root tsconfig (NodeNext) checks this file too, through the unit tests that import it.
import { CALL_COLUMNS, CALL_STATUSES, type CallColumn, type CallFilters } from './calls.js'
import { offsetParam, oneOf } from './view-query.js'

/** The Traces table's order: a column and its direction. */
export type TracesSort = { column: CallColumn; direction: 'asc' | 'desc' }

/** Everything of the Traces page a link carries: the applied filters, the order and the first row's offset. */
export type TracesView = { filters: CallFilters; sort: TracesSort; offset: number }

/** The filters of the plain Traces link: none but root calls only. */
export const NO_FILTERS: CallFilters = { op: '', status: '', from: '', to: '', text: '', rootsOnly: true }

/** The view of the plain Traces link: no filters but root calls only, newest first, the first page. */
export const DEFAULT_VIEW: TracesView = {
  filters: NO_FILTERS,
  sort: { column: 'started', direction: 'desc' },
  offset: 0,
}

// What a `datetime-local` field shows (`2025-03-01T12:30`, seconds optional): another form would leave the field blank
// while the list is filtered by it.
const LOCAL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/

const COLUMN_IDS: CallColumn[] = CALL_COLUMNS.map((c) => c.id)

function localTime(value: string | null): string {
  return value !== null && LOCAL_TIME.test(value) && !Number.isNaN(Date.parse(value)) ? value : ''
}

/** The view a route's query names; a missing, unknown or invalid value is the default's. */
export function parseTracesView(params: URLSearchParams): TracesView {
  return {
    filters: {
      op: params.get('op') ?? '',
      status: oneOf(params.get('status'), CALL_STATUSES, ''),
      from: localTime(params.get('from')),
      to: localTime(params.get('to')),
      text: params.get('q') ?? '',
      rootsOnly: params.get('roots') !== '0',
    },
    sort: {
      column: oneOf(params.get('sort'), COLUMN_IDS, DEFAULT_VIEW.sort.column),
      direction: oneOf(params.get('dir'), ['asc', 'desc'] as const, DEFAULT_VIEW.sort.direction),
    },
    offset: offsetParam(params.get('offset')),
  }
}

/**
 * The query of a view, defaults left out, for `routeHash('traces', [], …)`.
 * @example tracesViewParams({ ...DEFAULT_VIEW, offset: 50 }) // { offset: '50' }
 */
export function tracesViewParams(view: TracesView): Record<string, string> {
  const { filters, sort, offset } = view
  const params: Record<string, string> = {}
  if (filters.op !== '') params.op = filters.op
  if (filters.status !== '') params.status = filters.status
  if (filters.from !== '') params.from = filters.from
  if (filters.to !== '') params.to = filters.to
  if (filters.text !== '') params.q = filters.text
  if (!filters.rootsOnly) params.roots = '0'
  if (sort.column !== DEFAULT_VIEW.sort.column) params.sort = sort.column
  if (sort.direction !== DEFAULT_VIEW.sort.direction) params.dir = sort.direction
  if (offset > 0) params.offset = String(offset)
  return params
}
