import {
  getAlias,
  getLatestDigests,
  getObjectLabels,
  listAliasedVersions,
  listLatestAliases,
  listTaggedVersions,
} from '#shared/db/obj-label-repository'
import {
  listLiveVersionsByClass,
  listLiveVersionsByKind,
  listObjectVersions,
  type ObjVersionRecord,
} from '#shared/db/obj-repository'
import { NotFoundError } from '#shared/errors/http-error'
import type { ObjOut, ObjQueryReq, ObjReadReq, ObjVersion } from '#shared/schemas/obj'
import { labelsOf, recordVal, resolveObjVersion, toObjOut } from '#shared/tracing/objects-resolve'

/** `obj/read` (docs/tracing.md §8.4): 404 with `deleted_at` for a deleted version, 404 naming the request otherwise. */
export async function readObj(req: ObjReadReq): Promise<ObjOut> {
  const { project_id: project, object_id: objectId, digest } = req
  const record = await resolveObjVersion(project, objectId, digest, !req.metadata_only)
  if (record === undefined) throw new NotFoundError(`Obj ${objectId}:${digest} not found`)
  const v = record.version
  if (v.deleted_at) {
    throw new NotFoundError(`${objectId}:v${v.version_index} was deleted at ${v.deleted_at}`, {
      details: { deleted_at: v.deleted_at },
    })
  }
  if (req.include_tags_and_aliases) {
    const labels = await getObjectLabels(project, objectId)
    const isLatest = labels.aliases.some((a) => a.alias === 'latest' && a.digest === v.digest)
    return toObjOut(v, recordVal(record), { isLatest, labels: labelsOf(v.digest, labels) })
  }
  const latest = await getAlias(project, objectId, 'latest')
  return toObjOut(v, recordVal(record), { isLatest: latest === v.digest })
}

type Candidates = { records: ObjVersionRecord[]; latest?: Map<string, string> }

// Picks the narrowest stored listing for the filter (docs/tracing.md §8.5); the remaining conditions are applied in
// memory.
async function candidates(req: ObjQueryReq, withVal: boolean): Promise<Candidates> {
  const f = req.filter ?? {}
  const project = req.project_id
  if (f.object_ids != null && f.object_ids.length > 0) {
    const lists = await Promise.all([...new Set(f.object_ids)].map((id) => listObjectVersions(project, id, withVal)))
    return { records: lists.flat() }
  }
  if (f.latest_only) {
    const latest = await listLatestAliases(project)
    const lists = await Promise.all([...latest.keys()].map((id) => listObjectVersions(project, id, withVal)))
    return { records: lists.flat().filter((r) => latest.get(r.version.object_id) === r.version.digest), latest }
  }
  if (f.base_object_classes != null && f.base_object_classes.length > 0) {
    const lists = await Promise.all(
      [...new Set(f.base_object_classes)].map((c) => listLiveVersionsByClass(project, c, withVal)),
    )
    return { records: lists.flat() }
  }
  const kinds = f.is_op == null ? ['object', 'op'] : f.is_op ? ['op'] : ['object']
  const lists = await Promise.all(kinds.map((k) => listLiveVersionsByKind(project, k, withVal)))
  return { records: lists.flat() }
}

const pairKey = (objectId: string, digest: string) => `${objectId}\u0000${digest}`

function compare(sortBy: ObjQueryReq['sort_by']) {
  const keys = (sortBy ?? []).filter((s) => s.field === 'object_id' || s.field === 'created_at')
  return (a: ObjVersion, b: ObjVersion): number => {
    for (const s of keys) {
      const av = s.field === 'object_id' ? a.object_id : a.created_at
      const bv = s.field === 'object_id' ? b.object_id : b.created_at
      const c = av < bv ? -1 : av > bv ? 1 : 0
      if (c !== 0) return s.direction === 'desc' ? -c : c
    }
    const t = a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0
    return t !== 0 ? t : (a.version_index ?? 0) - (b.version_index ?? 0)
  }
}

/** `objs/query`: live versions matching the filter, sorted, paged. */
export async function queryObjs(req: ObjQueryReq): Promise<ObjOut[]> {
  const f = req.filter ?? {}
  const project = req.project_id
  const { records, latest: knownLatest } = await candidates(req, !req.metadata_only)
  let rows = records.filter((r) => !r.version.deleted_at && r.version.version_index !== undefined)
  const has = (list: string[] | null | undefined) => list != null && list.length > 0
  if (has(f.base_object_classes))
    rows = rows.filter((r) => f.base_object_classes?.includes(r.version.base_object_class ?? '\u0000'))
  if (has(f.exclude_base_object_classes)) {
    rows = rows.filter((r) => !f.exclude_base_object_classes?.includes(r.version.base_object_class ?? '\u0000'))
  }
  if (has(f.leaf_object_classes))
    rows = rows.filter((r) => f.leaf_object_classes?.includes(r.version.leaf_object_class ?? '\u0000'))
  if (f.is_op != null) rows = rows.filter((r) => (r.version.kind === 'op') === f.is_op)
  const latest =
    knownLatest ??
    (await getLatestDigests(
      project,
      rows.map((r) => r.version.object_id),
    ))
  const isLatest = (v: ObjVersion) => latest.get(v.object_id) === v.digest
  if (f.latest_only) rows = rows.filter((r) => isLatest(r.version))
  if (has(f.tags)) {
    const tagged = new Set(
      (await Promise.all((f.tags ?? []).map((t) => listTaggedVersions(project, t))))
        .flat()
        .map((p) => pairKey(p.objectId, p.digest)),
    )
    rows = rows.filter((r) => tagged.has(pairKey(r.version.object_id, r.version.digest)))
  }
  if (has(f.aliases)) {
    const names = f.aliases ?? []
    const named = new Set(
      (await Promise.all(names.filter((a) => a !== 'latest').map((a) => listAliasedVersions(project, a))))
        .flat()
        .map((p) => pairKey(p.objectId, p.digest)),
    )
    rows = rows.filter(
      (r) =>
        named.has(pairKey(r.version.object_id, r.version.digest)) || (names.includes('latest') && isLatest(r.version)),
    )
  }
  rows.sort((a, b) => compare(req.sort_by)(a.version, b.version))
  const start = req.offset ?? 0
  rows = rows.slice(start, req.limit == null ? undefined : start + req.limit)
  const labels = new Map<string, Awaited<ReturnType<typeof getObjectLabels>>>()
  if (req.include_tags_and_aliases) {
    for (const id of new Set(rows.map((r) => r.version.object_id))) labels.set(id, await getObjectLabels(project, id))
  }
  return rows.map((r) => {
    const l = labels.get(r.version.object_id)
    return toObjOut(r.version, recordVal(r), {
      isLatest: isLatest(r.version),
      sizeBytes: req.include_storage_size === true,
      ...(l ? { labels: labelsOf(r.version.digest, l) } : {}),
    })
  })
}
