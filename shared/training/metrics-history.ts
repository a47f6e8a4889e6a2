import { listLogRecords } from '#shared/db/training-log-repository'
import type { Principal } from '#shared/schemas/api-key'
import type { MetricSeries, MetricsHistory } from '#shared/schemas/training-log'
import { findModel } from '#shared/training/preview-models'

/** Reads a model's metrics history (one split's, steps after `afterStep` only, when given), ordered by step and time. */
export async function metricsHistory(
  principal: Principal,
  modelId: string,
  filter: { split?: string | undefined; afterStep?: number | undefined },
): Promise<MetricsHistory> {
  const model = await findModel(principal, modelId)
  const records = await listLogRecords(model.id, filter.split, filter.afterStep)
  // Metric keys come from the client: a null prototype keeps each an own property whatever it is.
  const series: Record<string, MetricSeries> = Object.create(null)
  const rows = records.map((record) => {
    for (const [key, value] of Object.entries(record.metrics)) {
      series[key] ??= { steps: [], values: [], recorded_at: [] }
      series[key].steps.push(record.step)
      series[key].values.push(value)
      series[key].recorded_at.push(record.recordedAt)
    }
    return {
      log_id: record.logId,
      split: record.split,
      step: record.step,
      recorded_at: record.recordedAt,
      metrics: record.metrics,
    }
  })
  return { model_id: model.id, split: filter.split ?? null, after_step: filter.afterStep ?? null, rows, series }
}
