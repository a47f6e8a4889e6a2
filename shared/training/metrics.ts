import type { MetricValues } from '#shared/schemas/training-log'
import type { TrajectoryGroup } from '#shared/schemas/trajectory'

/** What one log call's metrics were computed over. */
export type LogCounts = { group_count: number; trajectory_count: number; exception_count: number }

function mean(values: readonly number[]): number {
  let sum = 0
  for (const v of values) sum += v
  return sum / values.length
}

// numpy.std with ddof=0, as ART's `calculate_step_std_dev` uses.
function populationStdDev(values: readonly number[]): number {
  const m = mean(values)
  return Math.sqrt(mean(values.map((v) => (v - m) ** 2)))
}

/**
 * Computes a log call's metrics as the contract defines them (docs/training.md §5, ART's reference loop): `reward`,
 * `exception_rate` (exceptions count as items: E / (|T| + E)), the mean of every trajectory metric over the
 * trajectories carrying it (booleans as 1/0), `reward_std_dev` (mean population std of rewards over groups of more than
 * one trajectory, else 0) and `group_metric_<k>` over groups with at least one trajectory. Keys share one namespace,
 * are prefixed `<split>/`, and a value that overflows to a non-finite one is dropped with its key, `reward_std_dev`
 * included (JSON has no infinity; docs/training.md §5).
 *
 * @example computeLogMetrics('val', groups).metrics['val/reward']
 */
export function computeLogMetrics(
  split: string,
  groups: readonly TrajectoryGroup[],
): { metrics: MetricValues; counts: LogCounts } {
  const pooled = new Map<string, number[]>([
    ['reward', []],
    ['exception_rate', []],
  ])
  const add = (key: string, value: number | boolean) => {
    let list = pooled.get(key)
    if (list === undefined) {
      list = []
      pooled.set(key, list)
    }
    list.push(typeof value === 'boolean' ? (value ? 1 : 0) : value)
  }
  const stdDevs: number[] = []
  let trajectories = 0
  let exceptions = 0
  for (const group of groups) {
    for (const trajectory of group.trajectories) {
      add('exception_rate', 0)
      add('reward', trajectory.reward)
      for (const [key, value] of Object.entries(trajectory.metrics ?? {})) add(key, value)
    }
    for (const _ of group.exceptions ?? []) add('exception_rate', 1)
    if (group.trajectories.length > 0) {
      for (const [key, value] of Object.entries(group.metrics ?? {})) add(`group_metric_${key}`, value)
    }
    if (group.trajectories.length > 1) stdDevs.push(populationStdDev(group.trajectories.map((t) => t.reward)))
    trajectories += group.trajectories.length
    exceptions += group.exceptions?.length ?? 0
  }
  const averages = new Map<string, number>()
  for (const [key, values] of pooled) if (values.length > 0) averages.set(key, mean(values))
  averages.set('reward_std_dev', stdDevs.length > 0 ? mean(stdDevs) : 0)
  // Keys come from the client (split and metric names): a null prototype keeps each an own property whatever it is.
  const metrics: MetricValues = Object.create(null)
  for (const [key, value] of averages) if (Number.isFinite(value)) metrics[`${split}/${key}`] = value
  return {
    metrics,
    counts: { group_count: groups.length, trajectory_count: trajectories, exception_count: exceptions },
  }
}
