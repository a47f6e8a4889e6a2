import { assertProjectAccess, projectNameProblem } from '#shared/auth/authenticate'
import { listUsage } from '#shared/db/usage-repository'
import { BadRequestError } from '#shared/errors/http-error'
import type { ProjectRef } from '#shared/http/app-env'
import { hourOf } from '#shared/inference/usage-meter'
import { usageWindow } from '#shared/inference/usage-query'
import { noUsage, roundUsd, USAGE_SUMS } from '#shared/inference/usage-sums'
import type { Principal } from '#shared/schemas/api-key'
import type { UsageQuery, UsageReportRes, UsageRow } from '#shared/schemas/usage'

type Total = UsageReportRes['total']

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
  // Checked before access, with the parameter named (assertProjectAccess's own 400 names none): a name W&B refuses
  // is no project of any entity.
  const problem = projectNameProblem(project)
  if (problem !== undefined) {
    throw new BadRequestError(`Invalid project '${entity}/${project}': ${problem}`, { param: 'project' })
  }
  assertProjectAccess(principal, `${entity}/${project}`)
  return { entity, project }
}

// The window's counters; none to read when it holds no hour bucket (`start` = `end` on the hour), where the Query's
// range would be inverted (DynamoDB refuses `BETWEEN` with its bounds reversed).
async function countersOf(entity: string, start: Date, end: Date, project?: string) {
  if (end <= start) return []
  return listUsage(entity, hourOf(start), hourOf(new Date(end.getTime() - 1)), project)
}

function totalOf(rows: readonly UsageRow[]): Total {
  const total: Total = noUsage()
  for (const row of rows) for (const field of USAGE_SUMS) total[field] += row[field]
  total.cost_usd = roundUsd(total.cost_usd)
  return total
}

/**
 * The usage report of `GET /v1/usage`: hourly rows per project and model (shards summed) whose hour starts in the
 * window (`usageWindow`: `start` rounded down to its hour, `end` exclusive; default the last 24 hour buckets), for one
 * project or every project of the caller's entity, with totals and the window's effective bounds.
 */
export async function usageReport(
  query: UsageQuery,
  principal: Principal,
  fallback: ProjectRef,
): Promise<UsageReportRes> {
  const { entity, project } = projectOf(query, principal, fallback)
  const { start, end } = usageWindow(query)
  const rows = new Map<string, UsageRow>()
  for (const c of await countersOf(entity, start, end, project)) {
    const key = `${c.hour}\u0000${c.project}\u0000${c.model}`
    const row = rows.get(key) ?? {
      hour: `${c.hour}:00:00Z`,
      project: `${entity}/${c.project}`,
      model: c.model,
      ...noUsage(),
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
  // Costs rounded in rows and totals alike (roundUsd).
  const data = [...rows.values()].map((row) => ({ ...row, cost_usd: roundUsd(row.cost_usd) }))
  return {
    object: 'usage',
    entity,
    project: project === undefined ? null : `${entity}/${project}`,
    start: start.toISOString(),
    end: end.toISOString(),
    data,
    total: totalOf(data),
  }
}
