import type { BootstrapResult } from '#shared/auth/bootstrap'

/** What the start banner reports about a running local stack. */
export type BannerFacts = {
  /** The address the server listens on (`HOST`), possibly a wildcard. */
  host: string
  port: number
  /** The DynamoDB in use: the engine and where it keeps its data, or the endpoint given in `DYNAMODB_ENDPOINT`. */
  storage: string
  tableName: string
  /** The endpoint of an in-memory DynamoDB the stack launched: the CLIs can reach it only through DYNAMODB_ENDPOINT. */
  memoryEndpoint: string | undefined
  boot: BootstrapResult
}

// Wildcard addresses accept connections but cannot be connected to (a browser cannot open http://0.0.0.0:8700 on
// every system): the URLs people copy name the loopback address instead.
const WILDCARDS: Record<string, string> = { '0.0.0.0': '127.0.0.1', '::': 'localhost', '[::]': 'localhost' }

/** A URL for a server listening on `host:port` that a client on this machine can connect to. */
export function connectableUrl(host: string, port: number): string {
  const name = WILDCARDS[host] ?? host
  // An IPv6 literal goes in brackets in a URL.
  return `http://${name.includes(':') && !name.startsWith('[') ? `[${name}]` : name}:${port}`
}

/** The lines `npm start` prints once the stack serves (with the first key, on the very first start). */
export function bannerLines(facts: BannerFacts): string[] {
  const base = connectableUrl(facts.host, facts.port)
  const lines = [
    'Loom is running.',
    `  Console:          ${base}/console    (sign in with an API key)`,
    `  Tracing (Weave):  ${base}            WF_TRACE_SERVER_URL=${base}`,
    `  Inference:        ${base}/v1         OPENAI_BASE_URL=${base}/v1   (model loom/reference-1)`,
    `  OpenTelemetry:    ${base}/otel/v1/traces   OTEL_EXPORTER_OTLP_TRACES_ENDPOINT=${base}/otel/v1/traces (+ project_id header)`,
    `  Health:           ${base}/health`,
    `  OpenAPI:          ${base}/openapi.json`,
    `  DynamoDB:         ${facts.storage} (table ${facts.tableName})`,
  ]
  if (facts.memoryEndpoint !== undefined) {
    const table = facts.tableName === 'loom' ? '' : ` LOOM_TABLE_NAME=${facts.tableName}`
    lines.push(
      `  CLIs:             DYNAMODB_ENDPOINT=${facts.memoryEndpoint}${table} npm run keys -- …   (or npm run models)`,
      '                    (kept in memory: without DYNAMODB_ENDPOINT the CLIs open the data directory instead)',
    )
  }
  if (WILDCARDS[facts.host] !== undefined) {
    lines.push(`  Listening on every interface (HOST=${facts.host}): other machines use this machine's address.`)
  }
  const { boot } = facts
  if (boot.kind === 'generated') {
    lines.push(
      '',
      `  First start: created an API key for user '${boot.record.userId}' in entity '${boot.record.entity}'.`,
      `  It is shown only this once: ${boot.key}`,
    )
  } else if (boot.kind === 'configured') {
    lines.push(`  Bootstrap key registered for user '${boot.record.userId}' in entity '${boot.record.entity}'.`)
  }
  lines.push('', 'Press Ctrl-C to stop.')
  return lines
}
