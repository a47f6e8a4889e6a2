import { useEffect, useState } from 'preact/hooks'
import type { Api } from '../lib/api'
import { pagerState } from '../lib/calls'
import { formatCountOf } from '../lib/format'
import { columnsOf, compactValue, TABLE_PAGE_SIZE, tableRowsRequest } from '../lib/table-rows'
import { Empty, ErrorBox, Pager, PastLastPage } from './common'
import { JsonViewer } from './JsonViewer'

type TableRow = { digest: string; val: unknown; original_index: number }

/**
 * The rows of a table an object's value refers to (a Weave Dataset's `rows`): its row count (`table/query_stats`) and a
 * page of rows at a time (`table/query`), one column per key of the page's rows, each cell a one-line preview; a row's
 * number opens the whole row in the JSON viewer. `project` is the ref's project, which may be another than the page's.
 */
export function TableRows({
  api,
  project,
  digest,
  field,
  offset,
  onPage,
}: {
  api: Api
  project: string
  digest: string
  /** The value's key that holds the ref (`rows`), `''` when the value is the ref itself. */
  field: string
  /** The first row of the page shown (the route's `rows`). */
  offset: number
  /** Shows the page from another first row (0: the first page). */
  onPage: (offset: number) => void
}) {
  // The rows with the page they were read for: another page is loading from the render that asks for it (effects run
  // after paint), so the previous page's rows never show as this one's, settled.
  const pageKey = `${project} ${digest} ${offset}`
  const [read, setRead] = useState<{ key: string; rows: TableRow[] }>()
  const rows = read?.key === pageKey ? read.rows : undefined
  const [count, setCount] = useState<number | undefined>()
  const [expanded, setExpanded] = useState<number | undefined>()
  // The count and the rows fail apart: a page that reads again clears its own error, not the count's.
  const [countError, setCountError] = useState<unknown>()
  const [rowsError, setRowsError] = useState<unknown>()
  const error = rowsError ?? countError
  useEffect(() => {
    const abort = new AbortController()
    setCount(undefined)
    setCountError(undefined)
    api
      .post<{ count: number }>('table/query_stats', { project_id: project, digest }, abort.signal)
      .then((r) => setCount(r.count))
      .catch((err) => abort.signal.aborted || setCountError(err))
    return () => abort.abort()
  }, [api, project, digest])
  useEffect(() => {
    const abort = new AbortController()
    setExpanded(undefined)
    setRowsError(undefined)
    api
      .post<{ rows: TableRow[] }>(
        'table/query',
        tableRowsRequest(project, digest, { offset, limit: TABLE_PAGE_SIZE }),
        abort.signal,
      )
      .then((r) => setRead({ key: pageKey, rows: r.rows }))
      .catch((err) => abort.signal.aborted || setRowsError(err))
    return () => abort.abort()
  }, [api, project, digest, offset])

  const shown = rows ?? []
  const columns = columnsOf(shown.map((r) => r.val))
  const pager = pagerState(offset, shown.length, TABLE_PAGE_SIZE, count === undefined ? undefined : { count })
  const name = field === '' ? 'the table' : field
  // A Dataset's table is its `rows` field: "Rows of rows 240 rows" said it three times, so it is just "Table".
  const named = field !== '' && field !== 'rows'
  return (
    <section aria-label={`Rows of ${name}`} data-testid="object-table" data-digest={digest}>
      <h3>
        Table
        {named && (
          <>
            {' '}
            <code>{field}</code>
          </>
        )}
        {count === undefined ? null : (
          <span class="muted small">
            {' · '}
            <span data-testid="object-table-count">{formatCountOf(count, 'row')}</span>
          </span>
        )}
      </h3>
      <ErrorBox error={error} testId="object-table-error" />
      {rows !== undefined && rows.length === 0 ? (
        <Empty testId="object-table-empty">
          {offset > 0 ? (
            <PastLastPage
              text="No rows on this page: the table has fewer rows."
              onFirst={() => onPage(0)}
              testId="object-table-first"
            />
          ) : (
            <p>The table has no rows.</p>
          )}
        </Empty>
      ) : (
        <div class="table-wrap">
          <table class="rows-table" data-testid="object-table-rows" aria-busy={rows === undefined}>
            <caption class="sr-only">Rows of {name}</caption>
            <thead>
              <tr>
                <th scope="col">Row</th>
                {columns.map((c) => (
                  <th key={c} scope="col" class="wraps">
                    {c}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {shown.map((row) => {
                const open = expanded === row.original_index
                const val = typeof row.val === 'object' && row.val !== null ? (row.val as Record<string, unknown>) : {}
                return [
                  <tr
                    key={row.original_index}
                    data-testid="object-table-row"
                    data-row-index={row.original_index}
                    class={open ? 'selected' : ''}
                  >
                    <td class="num">
                      <button
                        type="button"
                        class="link"
                        aria-expanded={open}
                        aria-label={`Row ${row.original_index}: ${open ? 'hide' : 'show'} the whole row`}
                        onClick={() => setExpanded(open ? undefined : row.original_index)}
                        data-testid="object-table-row-toggle"
                      >
                        {row.original_index}
                      </button>
                    </td>
                    {columns.map((c) => (
                      <td key={c} class={typeof val[c] === 'number' ? 'num' : 'preview'}>
                        {compactValue(val[c])}
                      </td>
                    ))}
                  </tr>,
                  open && (
                    <tr key={`${row.original_index}-json`} class="json-row">
                      <td colSpan={columns.length + 1}>
                        <JsonViewer
                          value={row.val}
                          label={`Row ${row.original_index} of ${name}`}
                          testId="json-object-table-row"
                        />
                      </td>
                    </tr>
                  ),
                ]
              })}
            </tbody>
          </table>
        </div>
      )}
      <Pager offset={offset} size={TABLE_PAGE_SIZE} {...pager} onPage={onPage} ids="object-table" />
    </section>
  )
}
