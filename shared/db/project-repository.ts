import { putIfAbsent } from '#shared/db/conditional-write'
import { keyPart } from '#shared/db/key-part'
import { queryAll } from '#shared/db/query'
import { type Project, ProjectSchema } from '#shared/schemas/project'

// Project registry: PK=PROJ#<entity> SK=P#<project>, one item per project that holds data, so "the projects of an
// entity" is one Query (nothing else keyed by project can be listed without a Scan). Long names enter the keys as a
// digest (keyPart); the item keeps them whole.
const keyOf = (entity: string, project: string) => ({ PK: `PROJ#${keyPart(entity)}`, SK: `P#${keyPart(project)}` })

// Registered (or being registered) in this process: a project costs one write per process, not one per request.
const MAX_REMEMBERED = 10_000
const registered = new Map<string, Promise<void>>()

function split(projectId: string): [string, string] | undefined {
  const slash = projectId.indexOf('/')
  if (slash <= 0 || slash === projectId.length - 1) return undefined
  return [projectId.slice(0, slash), projectId.slice(slash + 1)]
}

async function write(entity: string, project: string, now: string): Promise<void> {
  // The first write wins, so `first_seen_at` stays the earliest; a retry whose first answer was lost, or a concurrent
  // first write from another process, finds the item there and is already done.
  await putIfAbsent({ ...keyOf(entity, project), entity, project, first_seen_at: now })
}

/**
 * Records that `<entity>/<project>` holds data; called by every write path that stores under a project (calls,
 * objects, tables, files, feedback, preview models, usage). At most one write per project per process; a failed write
 * is forgotten, so the next request retries it.
 */
export function registerProject(projectId: string, now = new Date()): Promise<void> {
  const known = registered.get(projectId)
  if (known !== undefined) return known
  const parts = split(projectId)
  if (parts === undefined) return Promise.resolve()
  if (registered.size >= MAX_REMEMBERED) registered.clear()
  const pending = write(parts[0], parts[1], now.toISOString())
  registered.set(projectId, pending)
  pending.catch(() => registered.delete(projectId))
  return pending
}

/** `registerProject` for several projects at once. */
export async function registerProjects(projectIds: Iterable<string>): Promise<void> {
  await Promise.all([...new Set(projectIds)].map((id) => registerProject(id)))
}

/** The registered projects of these entities, by entity then project name. */
export async function listProjects(entities: readonly string[]): Promise<Project[]> {
  const lists = await Promise.all(
    [...new Set(entities)].map((entity) =>
      queryAll({
        KeyConditionExpression: 'PK = :pk',
        ExpressionAttributeValues: { ':pk': `PROJ#${keyPart(entity)}` },
      }),
    ),
  )
  return lists
    .flat()
    .map((item) => {
      const { entity, project, first_seen_at } = item as Record<string, unknown>
      return ProjectSchema.parse({ project_id: `${entity}/${project}`, entity, project, first_seen_at })
    })
    .filter((p, i, all) => all.findIndex((q) => q.project_id === p.project_id) === i)
    .sort((a, b) => (a.entity === b.entity ? cmp(a.project, b.project) : cmp(a.entity, b.entity)))
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

/** Forgets which projects this process registered (tests that start from an empty table). */
export function forgetRegisteredProjects(): void {
  registered.clear()
}
