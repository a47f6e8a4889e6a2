import { createHash, randomBytes } from 'node:crypto'
import { safeParse, type z } from 'zod/mini'
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  putLogGroups,
  putLogRecord,
} from '#shared/db/training-log-repository'
import { RequestValidationError } from '#shared/errors/http-error'
import { toValidationIssues } from '#shared/errors/validation-issues'
import type { Principal } from '#shared/schemas/api-key'
import type { PreviewModel } from '#shared/schemas/preview-model'
import { type LogRequest, LogRequestSchema, type LogResponse } from '#shared/schemas/training-log'
import { encodeGroup } from '#shared/training/group-codec'
import { computeLogMetrics } from '#shared/training/metrics'
import { findModel } from '#shared/training/preview-models'

/** One validated log call: the parsed request and the body exactly as sent (stored whole). */
export type LogInput = {
  modelId: string
  request: LogRequest
  /** The parsed JSON body before validation, so stored groups keep every key the client sent. */
  raw: { trajectory_groups: unknown[] }
  /** SHA-256 of the body text, compared across retries that share an `Idempotency-Key`. */
  bodyHash: string
  idempotencyKey?: string | undefined
}

/** The outcome of a log call: what to answer and what the trace of the call needs. */
export type LogOutcome = { model: PreviewModel; response: LogResponse; replayed: boolean }

type ZodIssue = z.core.$ZodIssue

// zod reports an unknown `role` as a union with no branches; pydantic names the expected tags. Rewrite it as a
// literal mismatch so the 422 says which roles are allowed.
function withRoleTags(issues: readonly ZodIssue[]): ZodIssue[] {
  return issues.map((issue) => {
    if (issue.code !== 'invalid_union') return issue
    const tagged = issue as ZodIssue & { note?: string; options?: unknown[] }
    if (tagged.note === 'No matching discriminator' && Array.isArray(tagged.options)) {
      return { ...issue, code: 'invalid_value', values: tagged.options } as unknown as ZodIssue
    }
    return { ...issue, errors: issue.errors.map(withRoleTags) } as ZodIssue
  })
}

const IDEMPOTENCY_KEY_RE = /^[\x21-\x7e]{1,255}$/

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
 * Validates a log call's body and `Idempotency-Key` header, throwing a 422 with pydantic-style locations
 * (`["body","trajectory_groups",0,"trajectories",1,"reward"]`, `["header","Idempotency-Key"]`).
 */
export function parseLogInput(modelId: string, body: unknown, bodyText: string, idempotencyKey?: string): LogInput {
  const parsed = safeParse(LogRequestSchema, body, { reportInput: true })
  if (!parsed.success) throw new RequestValidationError(toValidationIssues(withRoleTags(parsed.error.issues), ['body']))
  if (idempotencyKey !== undefined && !IDEMPOTENCY_KEY_RE.test(idempotencyKey)) {
    throw new RequestValidationError([
      {
        type: 'string_pattern_mismatch',
        loc: ['header', 'Idempotency-Key'],
        msg: 'Idempotency-Key must be 1 to 255 visible ASCII characters',
      },
    ])
  }
  return {
    modelId,
    request: parsed.data,
    raw: body as { trajectory_groups: unknown[] },
    bodyHash: createHash('sha256').update(bodyText, 'utf8').digest('hex'),
    idempotencyKey,
  }
}

/**
 * Logs trajectory groups for one of the caller's models: computes the metrics, stores every group whole under
 * (model, split, step) and records the history row. With an `Idempotency-Key`, a retry of the same body returns the
 * first response and writes nothing new; the same key with another body is a 422 (IETF Idempotency-Key draft).
 */
export async function logTrajectories(principal: Principal, input: LogInput, now = new Date()): Promise<LogOutcome> {
  const model = await findModel(principal, input.modelId)
  let logId = uuidv7(now.getTime())
  let step = model.step
  let recordedAt = now.toISOString()
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
    if (held.response !== undefined)
      return { model, response: held.response, replayed: true }
      // An earlier attempt with this key stopped part-way: redo it with the same ids, so every write is a repeat.
    ;({ logId, step, recordedAt } = held)
  }
  const { split, trajectory_groups: groups } = input.request
  const { metrics, counts } = computeLogMetrics(split, groups)
  const encoded = input.raw.trajectory_groups.map((group) => encodeGroup(JSON.stringify(group)))
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
  return { model, response, replayed: false }
}
