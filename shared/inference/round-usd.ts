// How usage costs are rounded, by `GET /v1/usage` (shared/inference/usage-report.ts) and by the Console, which sums
// the report's rows into days and models (console/src/lib/usage-report.ts): pure, so the browser bundle imports it too.

/**
 * A cost in USD to 12 significant digits: sums of per-token prices carry binary noise (`0.00005800000000000001`),
 * while 12 digits keep a single token at any price (relative, not a fixed step).
 *
 * @example roundUsd(0.0009210000000000002) // 0.000921
 */
export function roundUsd(usd: number): number {
  return Number(usd.toPrecision(12))
}
