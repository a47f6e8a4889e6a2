import { useEffect, useMemo, useState } from 'preact/hooks'
import { CallDetail } from '../components/CallDetail'
import { CallTree } from '../components/CallTree'
import { Empty, ErrorBox, PageHeader } from '../components/common'
import type { Api } from '../lib/api'
import { type Call, callName, tracePageRequest } from '../lib/calls'
import { formatCost, formatCount, formatCountOf, formatDuration, formatTokens } from '../lib/format'
import { routeHash } from '../lib/route'
import { CallForest, descendantCount, timelineBounds, visibleRows } from '../lib/tree'
import { countedUsage, type Usage, usageTable } from '../lib/usage'

// The first page is small so the tree shows at once; later pages grow (500, 1,000, then 2,000 calls), so a large trace
// takes few requests.
const FIRST_PAGE = 100
const LAST_PAGE = 2000
const nextPage = (limit: number) => (limit === FIRST_PAGE ? 500 : Math.min(LAST_PAGE, limit * 2))

function UsageTable({ usage }: { usage: Usage | undefined }) {
  const table = usageTable(usage ?? {})
  if (table.rows.length === 0) return <p class="muted">No LLM usage recorded in this trace.</p>
  return (
    <div class="table-wrap">
      <p class="muted small" data-testid="trace-usage-pricing">
        Each LLM request once: a call's usage counts where no call below it records usage of the same model (the Weave
        SDKs add children's usage into their parents', so summing every call would count it again). Cost from the
        project's cost table (Weave <code>cost/create</code>); the Usage page prices completions from the model catalog.
      </p>
      <table data-testid="trace-usage-table">
        <thead>
          <tr>
            <th scope="col">Model</th>
            <th scope="col">Requests</th>
            <th scope="col">Prompt tokens</th>
            <th scope="col">Completion tokens</th>
            {table.cacheRead && <th scope="col">Cache read tokens</th>}
            {table.cacheCreation && <th scope="col">Cache creation tokens</th>}
            <th scope="col">Total tokens</th>
            <th scope="col">Cost</th>
          </tr>
        </thead>
        <tbody>
          {table.rows.map((r) => (
            <tr key={r.model} data-testid="trace-usage-row">
              <td>{r.model}</td>
              <td class="num">{formatCount(r.requests)}</td>
              <td class="num">{formatTokens(r.prompt)}</td>
              <td class="num">{formatTokens(r.completion)}</td>
              {table.cacheRead && <td class="num">{formatTokens(r.cacheRead)}</td>}
              {table.cacheCreation && <td class="num">{formatTokens(r.cacheCreation)}</td>}
              <td class="num">{formatTokens(r.total)}</td>
              <td class="num" title={String(r.cost ?? '')}>
                {formatCost(r.cost)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  )
}

/** The trace view: the call tree with its waterfall, the selected call's details and feedback, the usage roll-up. */
export function TracePage({
  api,
  project,
  traceId,
  selected,
}: {
  api: Api
  project: string
  traceId: string
  selected: string | undefined
}) {
  const [forest, setForest] = useState(() => new CallForest<Call>())
  const [version, setVersion] = useState(0)
  const [done, setDone] = useState(false)
  const [error, setError] = useState<unknown>()
  const [collapsed, setCollapsed] = useState<Set<string>>(new Set())
  const [now, setNow] = useState(Date.now())

  // The trace in pages, in the trace index's (id) order: each page is drawn as it arrives while the next is read, so
  // the first rows show after one small request however large the trace; calls that come before their parent move
  // under it when it arrives (CallForest). The tokens and cost are counted from the calls themselves once every page
  // is in (lib/usage.ts), the same count as the Traces table's.
  useEffect(() => {
    const abort = new AbortController()
    const tree = new CallForest<Call>()
    setForest(tree)
    setVersion(0)
    setDone(false)
    setError(undefined)
    const fail = (err: unknown) => abort.signal.aborted || setError(err)
    const load = async () => {
      let after: string | undefined
      for (let limit = FIRST_PAGE; ; limit = nextPage(limit)) {
        const page: Call[] = []
        await api.stream<Call>(
          'calls/stream_query',
          tracePageRequest(project, traceId, after, limit),
          (rows) => page.push(...rows),
          abort.signal,
        )
        if (abort.signal.aborted) return
        tree.add(page)
        setVersion(tree.version)
        if (page.length < limit) break
        after = page.at(-1)?.id
      }
      setNow(Date.now())
      setDone(true)
    }
    load().catch(fail)
    return () => abort.abort()
  }, [api, project, traceId])

  const roots = forest.roots
  // The forest changes in place; `version` counts its changes.
  const rows = useMemo(() => visibleRows(roots, collapsed), [roots, collapsed, version])
  const bounds = useMemo(() => timelineBounds(forest.calls(), now), [forest, version, now])
  // While pages arrive, a root may be a call whose parent is still to come: the trace's own root is the default.
  const root = roots.find((r) => !r.orphan) ?? (done ? roots[0] : undefined)
  const current = selected ?? root?.call.id
  const below = root === undefined ? 0 : descendantCount(root)
  // The forest changes in place; `version` counts its changes (the count runs once, when the last page is in).
  const usage = useMemo(() => (done ? countedUsage(forest.calls()) : undefined), [forest, done, version])
  const select = (id: string) => {
    location.replace(routeHash('trace', [traceId], { call: id }))
  }
  const toggle = (id: string) =>
    setCollapsed((c) => {
      const next = new Set(c)
      if (next.has(id)) next.delete(id)
      else next.add(id)
      return next
    })

  return (
    <div data-testid="page-trace">
      <PageHeader title={root === undefined ? 'Trace' : `Trace: ${callName(root.call)}`}>
        <a href={routeHash('traces')}>Back to traces</a>
      </PageHeader>
      <p class="muted small" data-testid="trace-meta">
        {formatCountOf(forest.size, 'call')}
        {done ? '' : ' (loading…)'} · {formatDuration(bounds.end - bounds.start)} · trace {traceId}
      </p>
      <ErrorBox error={error} testId="trace-error" />
      {done && forest.size === 0 ? (
        <Empty testId="trace-empty">
          <p>
            No calls found for trace <code class="break">{traceId}</code>. It may have been deleted, or belong to
            another project.
          </p>
        </Empty>
      ) : (
        <>
          <section aria-label="Usage roll-up" data-testid="trace-usage">
            <h2>Tokens and cost</h2>
            {usage === undefined ? (
              <p class="muted">Loading usage…</p>
            ) : (
              roots.map((r) => (
                <div key={r.call.id}>
                  {roots.length > 1 && <h3>{callName(r.call)}</h3>}
                  <UsageTable usage={usage.get(r.call.id)} />
                </div>
              ))
            )}
          </section>
          <div class="trace-layout">
            <section aria-label="Calls" class="trace-tree-panel">
              <div class="tree-toolbar">
                <button
                  type="button"
                  class="secondary"
                  onClick={() => setCollapsed(new Set())}
                  data-testid="tree-expand-all"
                >
                  Expand all
                </button>
                <button
                  type="button"
                  class="secondary"
                  onClick={() =>
                    setCollapsed(
                      new Set(
                        roots.flatMap((r) => r.children.filter((c) => c.children.length > 0).map((c) => c.call.id)),
                      ),
                    )
                  }
                  data-testid="tree-collapse-all"
                >
                  Collapse below roots
                </button>
                {below > 0 && (
                  <span class="muted small" data-testid="trace-under-root">
                    {formatCountOf(below, 'call')} under the root
                  </span>
                )}
              </div>
              <CallTree rows={rows} bounds={bounds} now={now} selected={current} onSelect={select} onToggle={toggle} />
            </section>
            {current !== undefined && <CallDetail api={api} project={project} id={current} />}
          </div>
        </>
      )}
    </div>
  )
}
