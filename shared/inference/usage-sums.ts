// What `GET /v1/usage` sums per row and in its total (shared/inference/usage-report.ts), and how it rounds costs; the
// Console sums the report's rows into days and models the same way (console/src/lib/usage-report.ts): pure, so the
// browser bundle imports it too.

/** The summed fields of a usage row, in the API's order. */
export const USAGE_SUMS = [
  'requests',
  'aborted_requests',
  'prompt_tokens',
  'completion_tokens',
  'cached_tokens',
  'total_tokens',
  'cost_usd',
] as const
export type UsageSums = Record<(typeof USAGE_SUMS)[number], number>

/** Every sum at zero, in the API's order: a row or a total before anything is added. */
export function noUsage(): UsageSums {
  return Object.fromEntries(USAGE_SUMS.map((field) => [field, 0])) as UsageSums
}

/**
 * A cost in USD to 12 significant digits: sums of per-token prices carry binary noise (`0.00005800000000000001`),
 * while 12 digits keep a single token at any price (relative, not a fixed step).
 *
 * @example roundUsd(0.0009210000000000002) // 0.000921
 */
export function roundUsd(usd: number): number {
  return Number(usd.toPrecision(12))
}
