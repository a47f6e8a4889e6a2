import * as z from 'zod/mini'

const Limit = z.int().check(z.positive())

/**
 * Optional request limits: `rpm` requests and `tpm` tokens (prompt + completion) per one-minute window, and
 * `concurrency` requests in flight at once. Set on API keys (per key) and on catalog models (per project using them).
 */
export const RateLimitsSchema = z.object({
  rpm: z.optional(Limit),
  tpm: z.optional(Limit),
  concurrency: z.optional(Limit),
})
export type RateLimits = z.infer<typeof RateLimitsSchema>

/**
 * The largest value an administrator may set for each limit (CLIs, catalog files); unset means unlimited. Past 2^53
 * the AWS SDK refuses to write a number at all, and a concurrency limit of `n` lists `n` slots on every claim
 * (rate-limit-repository `freeSlots`), so that one stays small.
 */
export const LIMIT_MAX = { rpm: 1_000_000, tpm: 1_000_000_000, concurrency: 10_000 } as const

/** The names of the limits, in the order they are shown. */
export const LIMIT_NAMES = ['rpm', 'tpm', 'concurrency'] as const

/** The limits set on a record (key, catalog model), or undefined when none is. */
export function limitsOf(record: RateLimits): RateLimits | undefined {
  const limits: RateLimits = {}
  for (const name of LIMIT_NAMES) if (record[name] !== undefined) limits[name] = record[name]
  return Object.keys(limits).length === 0 ? undefined : limits
}
