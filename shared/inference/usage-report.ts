import { assertProjectAccess } from '#shared/auth/authenticate'
import { listUsage } from '#shared/db/usage-repository'
import { BadRequestError } from '#shared/errors/http-error'
import type { ProjectRef } from '#shared/http/app-env'
import { hourOf } from '#shared/inference/usage-meter'
import type { Principal } from '#shared/schemas/api-key'
import type { UsageQuery, UsageRow } from '#shared/schemas/usage'

const DAY_MS = 24 * 3_600_000
// A report spans at most a year of hourly rows per project and model.
const MAX_SPAN_MS = 366 * DAY_MS

function parseTime(value: string, param: string): Date {
  const date = /^-?\d+(\.\d+)?$/.test(value) ? new Date(Number(value) * 1000) : new Date(value)
  if (Number.isNaN(date.getTime())) {
    throw new BadRequestError(`\`${param}\` must be an ISO 8601 time or Unix seconds, got '${value}'`, { param })
  }
  return date
}

// Counter keys hold the hour as `yyyy-mm-ddThh`; `toISOString` writes other years with a sign and six digits, which
// neither fits the key nor sorts with it (a range across year 10000 would be an inverted, refused Query).
function checkYears(date: Date, param: string): void {
  const year = date.getUTCFullYear()
  if (year < 0 || year > 9999) {
    throw new BadRequestError(`\`${param}\` must fall within the years 0000 to 9999`, { param })
  }
}

function projectOf(
  query: UsageQuery,
  principal: Principal,
  fallback: ProjectRef,
): { entity: string; project?: string } {
  if (query.project === undefined || query.project === '') return { entity: fallback.entity }
  const slash = query.project.indexOf('/')
  const entity = slash < 0 ? fallback.entity : query.project.slice(0, slash)
  const project = slash < 0 ? query.project : query.project.slice(slash + 1)
  if (entity === '' || project === '' || project.includes('/')) {
    throw new BadRequestError('`project` must be `<entity>/<project>` or a project name', { param: 'project' })
  }
  assertProjectAccess(principal, `${entity}/${project}`)
  return { entity, project }
}

/**
 * The usage report of `GET /v1/usage`: hourly rows per project and model (shards summed) between `start` and `end`
 * (default: the last 24 hours), for one project or every project of the caller's entity, with totals.
 */
export async function usageReport(query: UsageQuery, principal: Principal, fallback: ProjectRef) {
  const { entity, project } = projectOf(query, principal, fallback)
  const end = query.end === undefined ? new Date() : parseTime(query.end, 'end')
  const start = query.start === undefined ? new Date(end.getTime() - DAY_MS) : parseTime(query.start, 'start')
  checkYears(start, 'start')
  checkYears(end, 'end')
  if (start > end) throw new BadRequestError('`start` must not be after `end`', { param: 'start' })
  if (end.getTime() - start.getTime() > MAX_SPAN_MS) {
    throw new BadRequestError('The report spans at most 366 days', { param: 'start' })
  }
  const rows = new Map<string, UsageRow>()
  for (const c of await listUsage(entity, hourOf(start), hourOf(end), project)) {
    const key = `${c.hour}\u0000${c.project}\u0000${c.model}`
    const row = rows.get(key) ?? {
      hour: `${c.hour}:00:00Z`,
      project: `${entity}/${c.project}`,
      model: c.model,
      requests: 0,
      aborted_requests: 0,
      prompt_tokens: 0,
      completion_tokens: 0,
      cached_tokens: 0,
      total_tokens: 0,
      cost_usd: 0,
    }
    row.requests += c.requests
    row.aborted_requests += c.abortedRequests
    row.prompt_tokens += c.promptTokens
    row.completion_tokens += c.completionTokens
    row.cached_tokens += c.cachedTokens
    row.total_tokens += c.promptTokens + c.completionTokens
    row.cost_usd += c.costUsd
    rows.set(key, row)
  }
  const data = [...rows.values()]
  const total = { requests: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost_usd: 0 }
  for (const row of data) {
    total.requests += row.requests
    total.prompt_tokens += row.prompt_tokens
    total.completion_tokens += row.completion_tokens
    total.total_tokens += row.total_tokens
    total.cost_usd += row.cost_usd
  }
  return {
    object: 'usage',
    entity,
    project: project === undefined ? null : `${entity}/${project}`,
    start: start.toISOString(),
    end: end.toISOString(),
    data,
    total,
  }
}
