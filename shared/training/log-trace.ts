import { logger } from '#shared/logger'
import type { Principal } from '#shared/schemas/api-key'
import type { RecordCallInput } from '#shared/tracing/record-call'
import { recordCall } from '#shared/tracing/record-call'
import type { LogOutcome } from '#shared/training/log-trajectories'

/** The op name every training log call is traced under. */
export const TRAINING_LOG_OP = 'loom.training.log'

/**
 * What to trace for one log call, in the model's project (`<entity>/<project>`): inputs summarise the request (no
 * trajectories), the output is the response, the summary carries the metrics. The call id is the log id, so a replay
 * maps to the same call. Start and end default to the outcome's.
 */
export function trainingLogCall(
  outcome: LogOutcome,
  userId: string,
  timing: { startedAt: Date; endedAt: Date } = outcome,
): RecordCallInput {
  const { model, response } = outcome
  return {
    id: response.log_id,
    projectId: `${model.entity}/${model.project}`,
    opName: TRAINING_LOG_OP,
    displayName: `${model.name} ${response.split} log`,
    startedAt: timing.startedAt,
    endedAt: timing.endedAt,
    userId,
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

/**
 * Records a log call in the model's project so tracing sees training next to inference. A replayed (idempotent)
 * request is not traced again; a tracing failure is logged and never fails the log call, whose data is stored.
 */
export async function traceTrainingLog(outcome: LogOutcome, principal: Principal): Promise<void> {
  if (outcome.replayed) return
  try {
    await recordCall({ ...trainingLogCall(outcome, principal.userId), entities: principal.entities })
  } catch (error) {
    logger.error('training log trace failed', { logId: outcome.response.log_id, error })
  }
}
