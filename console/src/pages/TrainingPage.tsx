import { useEffect, useMemo, useState } from 'preact/hooks'
import { Chart } from '../components/Chart'
import { Empty, ErrorBox, PageHeader } from '../components/common'
import type { Api } from '../lib/api'
import {
  defaultTrainingAxis,
  loggedSteps,
  type MetricsRow,
  metricNames,
  type TrainingAxis,
  trainingSeries,
} from '../lib/charts'
import { browserTimeZone, formatCount, formatDate } from '../lib/format'
import { showRoute } from '../lib/navigate'
import { chosenAxis, chosenModels, trainingParams } from '../lib/page-views'
import { routeHash } from '../lib/route'

type Model = { id: string; entity: string; project: string; name: string; base_model: string; run_id: string | null }
type History = { model_id: string; rows: MetricsRow[] }

// A log's time on the chart's legend, to the second, in the browser's zone (several logs may share a minute).
const TIME_ZONE = browserTimeZone()
const timeLabel = (seconds: number) => formatDate(seconds * 1000, TIME_ZONE)

/**
 * Training: the project's preview models and their metrics history per split, several models overlaid, every log a
 * point over the step or the time logged. The chosen models and x axis are the route's query (`lib/page-views.ts`):
 * ticking or unticking a model, or picking an axis, is a new history entry.
 */
export function TrainingPage({ api, project, params }: { api: Api; project: string; params: URLSearchParams }) {
  const [entity = '', name = ''] = project.split('/')
  const [models, setModels] = useState<Model[] | undefined>()
  const listed = useMemo(() => (models ?? []).map((m) => m.id), [models])
  // Nothing is asked for until the list says which of the link's models the project has. Joined as the memo's key, so
  // the metrics effect below runs again only when the choice changes.
  const chosenKey = models === undefined ? '' : chosenModels(params, listed).join(',')
  const chosen = useMemo(() => (chosenKey === '' ? [] : chosenKey.split(',')), [chosenKey])
  const axisChoice = chosenAxis(params)
  const show = (next: string[], axis: TrainingAxis | undefined) =>
    showRoute(routeHash('training', [], trainingParams(next, listed, axis)), 'push')
  const [histories, setHistories] = useState<Record<string, History>>({})
  const [error, setError] = useState<unknown>()
  const rowsOf = (id: string) => histories[id]?.rows

  useEffect(() => {
    const abort = new AbortController()
    setError(undefined)
    api
      .get<{ data: Model[] }>('v1/preview/models', { entity, project: name }, abort.signal)
      .then((r) => setModels(r.data))
      .catch((err) => abort.signal.aborted || setError(err))
    return () => abort.abort()
  }, [api, entity, name])

  useEffect(() => {
    const abort = new AbortController()
    for (const id of chosen) {
      if (histories[id] !== undefined) continue
      // A new request clears the previous one's error: it shows only while nothing has been asked since.
      setError(undefined)
      api
        .get<History>(`v1/preview/models/${encodeURIComponent(id)}/metrics`, undefined, abort.signal)
        .then((h) => setHistories((all) => ({ ...all, [id]: h })))
        .catch((err) => abort.signal.aborted || setError(err))
    }
    return () => abort.abort()
  }, [api, chosen])

  const selected = useMemo(
    () =>
      chosen.flatMap((id) => {
        const model = models?.find((m) => m.id === id)
        const history = histories[id]
        return model === undefined || history === undefined ? [] : [{ label: model.name, rows: history.rows }]
      }),
    [chosen, models, histories],
  )
  const names = useMemo(() => metricNames(selected.flatMap((s) => s.rows)), [selected])
  const axis = axisChoice ?? defaultTrainingAxis(selected.flatMap((s) => s.rows))

  return (
    <div data-testid="page-training">
      <PageHeader title="Training" />
      <ErrorBox error={error} testId="training-error" />
      {models !== undefined && models.length === 0 ? (
        <Empty testId="training-empty">
          <p>No preview models in {project}. Register one with ART's client or the API, then log trajectories:</p>
          <pre>{`POST /v1/preview/models {"entity": "${entity}", "project": "${name}", "name": "my-agent", "base_model": "..."}\nPOST /v1/preview/models/<id>/log`}</pre>
        </Empty>
      ) : (
        <>
          <fieldset class="card" data-testid="training-models">
            <legend>Models (choose several to compare)</legend>
            <div class="table-wrap">
              <table data-testid="training-models-table">
                <thead>
                  <tr>
                    <th scope="col">Compare</th>
                    <th scope="col">Name</th>
                    <th scope="col">Base model</th>
                    <th scope="col">Logs</th>
                    <th scope="col">Steps</th>
                  </tr>
                </thead>
                <tbody>
                  {(models ?? []).map((m) => (
                    <tr key={m.id} data-testid="training-model-row" data-model-id={m.id}>
                      <td>
                        <input
                          type="checkbox"
                          id={`model-${m.id}`}
                          checked={chosen.includes(m.id)}
                          onChange={(e) =>
                            show(
                              e.currentTarget.checked ? [...chosen, m.id] : chosen.filter((c) => c !== m.id),
                              axisChoice,
                            )
                          }
                          data-testid="training-model-toggle"
                        />
                      </td>
                      <td>
                        <label for={`model-${m.id}`}>{m.name}</label>
                      </td>
                      <td>{m.base_model}</td>
                      <td class="num" data-testid="training-model-logs">
                        {rowsOf(m.id) === undefined ? '—' : formatCount(rowsOf(m.id)?.length ?? 0)}
                      </td>
                      <td class="num" data-testid="training-model-steps">
                        {rowsOf(m.id) === undefined ? '—' : formatCount(loggedSteps(rowsOf(m.id) ?? []))}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </fieldset>
          {models !== undefined && chosen.length === 0 && (
            <p class="muted" data-testid="training-pick-hint">
              Pick a model above to see its metrics.
            </p>
          )}
          {selected.length > 0 && names.splits.length === 0 && (
            <p class="muted" data-testid="training-no-metrics">
              No metrics logged yet for the chosen models.
            </p>
          )}
          {names.splits.length > 0 && (
            <form
              class="filters"
              aria-label="Chart options"
              data-testid="training-filters"
              onSubmit={(e) => e.preventDefault()}
            >
              <label>
                X axis
                <select
                  value={axis}
                  onChange={(e) => show(chosen, e.currentTarget.value as TrainingAxis)}
                  data-testid="training-axis"
                >
                  <option value="step">Step</option>
                  <option value="time">Time logged</option>
                </select>
              </label>
            </form>
          )}
          {names.splits.map((split) => (
            <section key={split} aria-label={`Split ${split}`} data-testid="training-split" data-split={split}>
              <h2>Split: {split}</h2>
              <div class="chart-grid">
                {names.metrics.map((metric) => {
                  const data = trainingSeries(selected, split, metric, axis)
                  if (data.x.length === 0) return null
                  return (
                    <Chart
                      key={`${split}-${metric}`}
                      data={data}
                      xKind={axis}
                      {...(axis === 'time' ? { timeZone: TIME_ZONE, timeLabel } : {})}
                      title={metric}
                      testId={`training-chart-${split}-${metric}`}
                      height={220}
                    />
                  )
                })}
              </div>
            </section>
          ))}
        </>
      )}
    </div>
  )
}
