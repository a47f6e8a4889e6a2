import { createHash } from 'node:crypto'
import * as z from 'zod/mini'
import { RequestValidationError, type ValidationIssue } from '#shared/errors/http-error'
import { toValidationIssues } from '#shared/errors/validation-issues'
import type { JsonWithElements } from '#shared/http/read-json'
import {
  IdempotencyKeySchema,
  type LogRequest,
  LogRequestSchema,
  type MetricValues,
} from '#shared/schemas/training-log'
import { computeLogMetrics, type LogCounts } from '#shared/training/metrics'

/** Most trajectory groups one call may carry: each is at least one stored item, and the log record lists them all. */
export const MAX_GROUPS_PER_LOG = 10_000

/** Largest JSON size of a call's computed metrics (kept in the log record, under DynamoDB's 400 KB item limit). */
export const MAX_METRICS_BYTES = 64 * 1024

/** One validated log call: the parsed request, its metrics and each group's text as sent (stored whole). */
export type LogInput = {
  modelId: string
  request: LogRequest
  /**
   * Each trajectory group's JSON text exactly as the client wrote it (every key, number and escape as sent), in
   * request order: what is stored.
   */
  groupTexts: readonly string[]
  metrics: MetricValues
  counts: LogCounts
  /** SHA-256 of the body text, compared across retries that share an `Idempotency-Key`. */
  bodyHash: string
  idempotencyKey?: string | undefined
}

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

const LONE_SURROGATE = /\p{Cs}/u

function invalid(loc: (string | number)[], msg: string, type = 'value_error'): never {
  const issue: ValidationIssue = { type, loc, msg }
  throw new RequestValidationError([issue])
}

/** The key of the body's array whose elements are stored as sent (`readJsonBodyWithElements`). */
export const GROUPS_KEY = 'trajectory_groups'

/**
 * Validates a log call's body (read with its `trajectory_groups` elements as text, `readJsonBodyWithElements`) and
 * `Idempotency-Key` header and computes its metrics, throwing a 422 with pydantic-style locations
 * (`["body","trajectory_groups",0,"trajectories",1,"reward"]`, `["header","Idempotency-Key"]`) before anything is read
 * or written.
 */
export function parseLogInput(modelId: string, body: JsonWithElements, idempotencyKey?: string): LogInput {
  const parsed = z.safeParse(LogRequestSchema, body.value, { reportInput: true })
  if (!parsed.success) throw new RequestValidationError(toValidationIssues(withRoleTags(parsed.error.issues), ['body']))
  if (idempotencyKey !== undefined && !z.safeParse(IdempotencyKeySchema, idempotencyKey).success) {
    invalid(
      ['header', 'Idempotency-Key'],
      'Idempotency-Key must be 1 to 255 visible ASCII characters',
      'string_pattern_mismatch',
    )
  }
  const request = parsed.data
  // The split is part of stored keys and attributes: it must be text DynamoDB can hold (no lone UTF-16 surrogate,
  // which JSON's `\ud800` escapes can carry).
  if (LONE_SURROGATE.test(request.split)) {
    invalid(
      ['body', 'split'],
      'Input should be a valid string, unable to parse raw data as a unicode string',
      'string_unicode',
    )
  }
  if (request.trajectory_groups.length > MAX_GROUPS_PER_LOG) {
    invalid(
      ['body', 'trajectory_groups'],
      `List should have at most ${MAX_GROUPS_PER_LOG} items after validation, not ${request.trajectory_groups.length}`,
      'too_long',
    )
  }
  // The scan and JSON.parse read the same text: a valid body's last `trajectory_groups` is the array both see.
  if (body.elements?.length !== request.trajectory_groups.length) {
    throw new Error('The trajectory groups cut from the body do not match the parsed ones')
  }
  const { metrics, counts } = computeLogMetrics(request.split, request.trajectory_groups)
  const metricsBytes = Buffer.byteLength(JSON.stringify(metrics))
  if (metricsBytes > MAX_METRICS_BYTES) {
    // Every key is prefixed with the split: when the prefixes are most of the size, the split is what to shorten.
    const keys = Object.keys(metrics).length
    const splitBytes = keys * Buffer.byteLength(request.split)
    if (2 * splitBytes > metricsBytes) {
      invalid(
        ['body', 'split'],
        `The computed metrics exceed ${MAX_METRICS_BYTES} bytes: the split (${Buffer.byteLength(request.split)} bytes) prefixes each of their ${keys} keys`,
      )
    }
    invalid(
      ['body', 'trajectory_groups'],
      `The computed metrics exceed ${MAX_METRICS_BYTES} bytes: too many distinct metric keys (${keys})`,
    )
  }
  return {
    modelId,
    request,
    groupTexts: body.elements,
    metrics,
    counts,
    bodyHash: createHash('sha256').update(body.text, 'utf8').digest('hex'),
    idempotencyKey,
  }
}
