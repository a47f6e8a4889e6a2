import {
  deleteAlias,
  deleteTag,
  hasLatestAlias,
  listDistinctLabels,
  putAlias,
  putTag,
} from '#shared/db/obj-label-repository'
import { NotFoundError } from '#shared/errors/http-error'
import type { ObjVersion } from '#shared/schemas/obj'
import { resolveObjVersion } from '#shared/tracing/objects-resolve'

async function liveVersion(project: string, objectId: string, digest: string): Promise<ObjVersion> {
  const record = await resolveObjVersion(project, objectId, digest, false)
  if (record === undefined || record.version.deleted_at) {
    throw new NotFoundError(`Object version ${objectId}:${digest} not found`)
  }
  return record.version
}

const unique = (values: readonly string[]) => [...new Set(values)]

/**
 * After labels are written: the version is read again (strongly), and if an `obj/delete` marked it deleted meanwhile
 * the labels are taken back and the request is a 404. A delete marks its versions before it reads the labels it drops,
 * so a label written after that read is seen here, and one written before it is dropped by the delete.
 */
async function stillLive(project: string, objectId: string, v: ObjVersion, takeBack: () => Promise<void>) {
  const record = await resolveObjVersion(project, objectId, v.digest, false)
  if (record !== undefined && !record.version.deleted_at) return
  await takeBack()
  throw new NotFoundError(`Object version ${objectId}:${v.digest} not found`)
}

/** Adds tags to a live version (duplicates ignored); 404 when the version is missing or deleted. */
export async function addObjTags(project: string, objectId: string, digest: string, tags: readonly string[]) {
  const v = await liveVersion(project, objectId, digest)
  for (const tag of unique(tags)) await putTag(project, objectId, v.digest, tag)
  await stillLive(project, objectId, v, async () => {
    for (const tag of unique(tags)) await deleteTag(project, objectId, v.digest, tag)
  })
}

/** Removes tags from a version; absent tags and versions are a no-op. */
export async function removeObjTags(project: string, objectId: string, digest: string, tags: readonly string[]) {
  const record = await resolveObjVersion(project, objectId, digest, false)
  const target = record?.version.digest ?? digest
  for (const tag of unique(tags)) await deleteTag(project, objectId, target, tag)
}

/** Points aliases at a live version, moving them from any other version of the object. */
export async function setObjAliases(project: string, objectId: string, digest: string, aliases: readonly string[]) {
  const v = await liveVersion(project, objectId, digest)
  for (const alias of unique(aliases)) await putAlias(project, objectId, alias, v.digest)
  await stillLive(project, objectId, v, async () => {
    // Only where the alias still points at this version: another request may have moved it since.
    for (const alias of unique(aliases)) await deleteAlias(project, objectId, alias, { ifDigest: v.digest })
  })
}

/** Removes aliases of an object (`latest` is managed by the server and left alone); absent ones are a no-op. */
export async function removeObjAliases(project: string, objectId: string, aliases: readonly string[]) {
  for (const alias of unique(aliases)) if (alias !== 'latest') await deleteAlias(project, objectId, alias)
}

/** Sorted distinct tags of a project. */
export async function listProjectTags(project: string): Promise<string[]> {
  return listDistinctLabels(project, 'TAGS')
}

/** Sorted distinct aliases of a project, `latest` included when any object has a latest version. */
export async function listProjectAliases(project: string): Promise<string[]> {
  const [names, latest] = await Promise.all([listDistinctLabels(project, 'ALIASES'), hasLatestAlias(project)])
  return latest ? [...names, 'latest'].sort() : names
}
