import { randomBytes } from 'node:crypto'
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  putLogGroups,
  putLogRecord,
} from '#shared/db/training-log-repository'
import { RequestValidationError } from '#shared/errors/http-error'
import type { Principal } from '#shared/schemas/api-key'
import type { PreviewModel } from '#shared/schemas/preview-model'
import type { LogResponse } from '#shared/schemas/training-log'
import { encodeGroup } from '#shared/training/group-codec'
import type { LogInput } from '#shared/training/log-input'
import { findModel } from '#shared/training/preview-models'

/** The outcome of a log call: what to answer and what the trace of the call needs. */
export type LogOutcome = {
  model: PreviewModel
  response: LogResponse
  /** True when an `Idempotency-Key` retry was answered from the first call's stored response. */
  replayed: boolean
  startedAt: Date
  endedAt: Date
}

/** A UUIDv7 (time-ordered), the id form tracing SDKs use for calls. */
export function uuidv7(now = Date.now()): string {
  const bytes = randomBytes(16)
  bytes.writeUIntBE(now, 0, 6)
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x70
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/**
 * Logs trajectory groups for one of the caller's models: computes the metrics, stores every group whole under
 * (model, split, step) and records the history row. With an `Idempotency-Key`, a retry of the same body returns the
 * first response and writes nothing new; the same key with another body is a 422 (IETF Idempotency-Key draft).
 */
export async function logTrajectories(
  principal: Principal,
  input: LogInput,
  startedAt = new Date(),
): Promise<LogOutcome> {
  const model = await findModel(principal, input.modelId)
  let logId = uuidv7(startedAt.getTime())
  let step = model.step
  let recordedAt = startedAt.toISOString()
  const key = input.idempotencyKey
  if (key !== undefined) {
    const held = await claimIdempotencyKey(model.id, key, { bodyHash: input.bodyHash, logId, step, recordedAt })
    if (held.bodyHash !== input.bodyHash) {
      throw new RequestValidationError([
        {
          type: 'idempotency_key_reused',
          loc: ['header', 'Idempotency-Key'],
          msg: 'This Idempotency-Key was already used with a different request body',
        },
      ])
    }
    if (held.response !== undefined) {
      return { model, response: held.response, replayed: true, startedAt, endedAt: new Date() }
    }
    // An earlier attempt with this key stopped part-way: redo it with the same ids, so every write is a repeat.
    logId = held.logId
    step = held.step
    recordedAt = held.recordedAt
  }
  const { split } = input.request
  const { metrics, counts } = input
  const encoded = input.groupTexts.map((text) => encodeGroup(text))
  await putLogGroups(logId, encoded)
  await putLogRecord({
    modelId: model.id,
    logId,
    split,
    step,
    recordedAt,
    metrics,
    groupCount: counts.group_count,
    trajectoryCount: counts.trajectory_count,
    exceptionCount: counts.exception_count,
    chunks: encoded.map((chunks) => chunks.length),
    codec: 'gzip',
  })
  const response: LogResponse = {
    log_id: logId,
    model_id: model.id,
    split,
    step,
    recorded_at: recordedAt,
    metrics,
    ...counts,
  }
  if (key !== undefined) await completeIdempotencyKey(model.id, key, response)
  return { model, response, replayed: false, startedAt, endedAt: new Date() }
}
