import { useEffect, useMemo, useState } from 'preact/hooks'
import { Empty, ErrorBox, PageHeader } from '../components/common'
import type { Api } from '../lib/api'
import { callName } from '../lib/calls'
import { browserTimeZone, formatCount, formatDate, formatPercent } from '../lib/format'
import { annotatorProgress, type QueueItem } from '../lib/queues'
import { routeHash } from '../lib/route'

// Call start times are shown in the browser's time zone, named in the column heading (as on Traces).
const TIME_ZONE = browserTimeZone()

type Queue = {
  id: string
  name: string
  description: string
  created_at: string
  created_by: string
  scorer_refs: string[]
}
type QueueStats = { queue_id: string; total_items: number; completed_items: number }

function QueueItems({ api, project, queue }: { api: Api; project: string; queue: Queue }) {
  const [items, setItems] = useState<QueueItem[] | undefined>()
  const [error, setError] = useState<unknown>()
  useEffect(() => {
    const abort = new AbortController()
    setItems(undefined)
    setError(undefined)
    api
      .post<{ items: QueueItem[] }>(
        `annotation_queues/${encodeURIComponent(queue.id)}/items/query`,
        { project_id: project, include_position: true },
        abort.signal,
      )
      .then((r) => setItems(r.items))
      .catch((err) => abort.signal.aborted || setError(err))
    return () => abort.abort()
  }, [api, project, queue.id])
  const progress = useMemo(() => (items === undefined ? undefined : annotatorProgress(items)), [items])
  return (
    <section aria-label={`Queue ${queue.name}`} data-testid="queue-detail" data-queue-id={queue.id}>
      <h2>{queue.name}</h2>
      {queue.description !== '' && <p>{queue.description}</p>}
      <ErrorBox error={error} testId="queue-error" />
      {progress !== undefined && items !== undefined && items.length > 0 && (
        <div class="table-wrap">
          <table data-testid="queue-progress">
            <caption>Progress per annotator (each item counts under the annotator of its latest state)</caption>
            <thead>
              <tr>
                <th scope="col">Annotator</th>
                <th scope="col">Done</th>
                <th scope="col">Skipped</th>
                <th scope="col">In progress</th>
              </tr>
            </thead>
            <tbody>
              {progress.annotators.map((a) => (
                <tr key={a.annotator} data-testid="queue-progress-row">
                  <td>{a.annotator}</td>
                  <td class="num">{formatCount(a.completed)}</td>
                  <td class="num">{formatCount(a.skipped)}</td>
                  <td class="num">{formatCount(a.in_progress)}</td>
                </tr>
              ))}
              <tr data-testid="queue-progress-pending">
                <td>Pending (not started)</td>
                <td colSpan={3} class="num">
                  {formatCount(progress.pending)}
                </td>
              </tr>
            </tbody>
          </table>
        </div>
      )}
      {items !== undefined && items.length === 0 ? (
        <Empty testId="queue-items-empty">
          <p>This queue has no items. Add calls with `POST /annotation_queues/{'{queue_id}'}/items`.</p>
        </Empty>
      ) : (
        // A failed request shows its alert only, not an empty table under it.
        error === undefined && (
          <div class="table-wrap">
            <table data-testid="queue-items">
              <thead>
                <tr>
                  <th scope="col">#</th>
                  <th scope="col">Call</th>
                  <th scope="col">State</th>
                  <th scope="col">Annotator</th>
                  <th scope="col" class="wraps" data-testid="queue-started-column">
                    Call started ({TIME_ZONE})
                  </th>
                </tr>
              </thead>
              <tbody>
                {(items ?? []).map((item) => (
                  <tr key={item.id} data-testid="queue-item-row" data-call-id={item.call_id}>
                    <td class="num">{item.position_in_queue ?? ''}</td>
                    <td>
                      <a href={routeHash('trace', [item.call_trace_id], { call: item.call_id })}>
                        {callName({ op_name: item.call_op_name })}
                      </a>
                    </td>
                    <td>{item.annotation_state}</td>
                    <td>{item.annotator_user_id || '—'}</td>
                    <td class="date">{formatDate(item.call_started_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )
      )}
    </section>
  )
}

/** Queues: the project's annotation queues with progress; one queue's items with their calls. */
export function QueuesPage({ api, project, queueId }: { api: Api; project: string; queueId: string | undefined }) {
  const [queues, setQueues] = useState<Queue[] | undefined>()
  const [stats, setStats] = useState<Record<string, QueueStats>>({})
  const [error, setError] = useState<unknown>()
  useEffect(() => {
    const abort = new AbortController()
    setError(undefined)
    const rows: Queue[] = []
    api
      .stream<Queue>('annotation_queues/query', { project_id: project }, (batch) => rows.push(...batch), abort.signal)
      .then(async () => {
        setQueues(rows)
        if (rows.length === 0) return
        const s = await api.post<{ stats: QueueStats[] }>(
          'annotation_queues/stats',
          { project_id: project, queue_ids: rows.map((q) => q.id) },
          abort.signal,
        )
        setStats(Object.fromEntries(s.stats.map((x) => [x.queue_id, x])))
      })
      .catch((err) => abort.signal.aborted || setError(err))
    return () => abort.abort()
  }, [api, project])
  // A deep link names its queue: one that is not in the project says so rather than showing another queue.
  const current = queueId === undefined ? queues?.[0] : queues?.find((q) => q.id === queueId)
  return (
    <div data-testid="page-queues">
      <PageHeader title="Queues" />
      <ErrorBox error={error} testId="queues-error" />
      {queues !== undefined && queues.length === 0 ? (
        <Empty testId="queues-empty">
          <p>No annotation queues in {project}. Create one with `POST /annotation_queues` and add calls to it.</p>
        </Empty>
      ) : (
        <div class="split">
          <div class="table-wrap">
            <table data-testid="queues-table">
              <thead>
                <tr>
                  <th scope="col">Queue</th>
                  <th scope="col">Items</th>
                  <th scope="col">Done or skipped</th>
                  <th scope="col">Progress</th>
                </tr>
              </thead>
              <tbody>
                {(queues ?? []).map((q) => {
                  const s = stats[q.id]
                  const share = s === undefined || s.total_items === 0 ? null : s.completed_items / s.total_items
                  return (
                    <tr
                      key={q.id}
                      data-testid="queues-row"
                      data-queue-id={q.id}
                      class={q.id === current?.id ? 'selected' : ''}
                    >
                      <td>
                        <a href={routeHash('queues', [q.id])} aria-current={q.id === current?.id ? 'true' : undefined}>
                          {q.name}
                        </a>
                      </td>
                      <td class="num" data-testid="queues-total">
                        {s === undefined ? '—' : formatCount(s.total_items)}
                      </td>
                      <td class="num" data-testid="queues-completed">
                        {s === undefined ? '—' : formatCount(s.completed_items)}
                      </td>
                      <td>
                        <progress max={1} value={share ?? 0} aria-label={`${q.name} progress`} /> {formatPercent(share)}
                      </td>
                    </tr>
                  )
                })}
              </tbody>
            </table>
          </div>
          {current !== undefined && <QueueItems api={api} project={project} queue={current} />}
          {queues !== undefined && current === undefined && (
            <Empty testId="queue-not-found">
              <p>
                Queue not found: no queue {queueId} in {project}. It may have been deleted; choose one from the list.
              </p>
            </Empty>
          )}
        </div>
      )}
    </div>
  )
}
