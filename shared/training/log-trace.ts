import type { LogResponse } from '#shared/schemas/training-log'
import type { LogOutcome } from '#shared/training/log-trajectories'

/** The op name every training log call is traced under. */
export const TRAINING_LOG_OP = 'loom.training.log'

/** A finished call in the tracing contract's insert shape (start and end in one), ready for the calls store. */
export type TrainingLogCall = {
  project_id: string
  id: string
  trace_id: string
  op_name: typeof TRAINING_LOG_OP
  display_name: string
  started_at: string
  ended_at: string
  attributes: Record<string, unknown>
  inputs: Record<string, unknown>
  output: LogResponse
  summary: Record<string, unknown>
}

/**
 * What to trace for one log call, in the model's project (`<entity>/<project>`): inputs summarise the request (no
 * trajectories), the output is the response, the summary carries the metrics. The call id is the log id, so a replay
 * maps to the same call; callers skip tracing when `outcome.replayed` is true. Start and end default to the outcome's.
 *
 * @example if (!outcome.replayed) await recordCall(trainingLogCall(outcome))
 */
export function trainingLogCall(
  outcome: LogOutcome,
  timing: { startedAt: Date; endedAt: Date } = outcome,
): TrainingLogCall {
  const { model, response } = outcome
  return {
    project_id: `${model.entity}/${model.project}`,
    id: response.log_id,
    trace_id: response.log_id,
    op_name: TRAINING_LOG_OP,
    display_name: `${model.name} ${response.split} log`,
    started_at: timing.startedAt.toISOString(),
    ended_at: timing.endedAt.toISOString(),
    attributes: { loom: { kind: 'training.log', model_id: model.id, base_model: model.base_model } },
    inputs: {
      model_id: model.id,
      model_name: model.name,
      split: response.split,
      group_count: response.group_count,
      trajectory_count: response.trajectory_count,
      exception_count: response.exception_count,
    },
    output: response,
    summary: { training: { split: response.split, step: response.step, metrics: response.metrics } },
  }
}
