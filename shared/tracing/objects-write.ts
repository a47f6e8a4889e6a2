import { assertProjectAccess } from '#shared/auth/authenticate'
import { getIndexCounter } from '#shared/db/obj-index-repository'
import { deleteAlias, deleteTag, getAlias, getObjectLabels, putAlias } from '#shared/db/obj-label-repository'
import {
  claimObjVersion,
  getObjVersion,
  listObjectVersions,
  markVersionDeleted,
  reviveVersion,
} from '#shared/db/obj-repository'
import { registerProject } from '#shared/db/project-repository'
import { BadRequestError, ConflictError, NotFoundError } from '#shared/errors/http-error'
import type { Principal } from '#shared/schemas/api-key'
import type { ObjCreateReq, ObjDeleteReq, ObjVersion } from '#shared/schemas/obj'
import { bytesDigest, pyRepr, pythonDumps } from '#shared/tracing/digest'
import { exactPart, jsonExact } from '#shared/tracing/json-exact'
import { objectClasses, objectKind, processIncomingVal } from '#shared/tracing/object-classes'
import { assignVersionIndex } from '#shared/tracing/objects-index'
import { resolveObjVersion } from '#shared/tracing/objects-resolve'

const MAX_DELETE_DIGESTS = 100

/**
 * A live version of `(object_id, kind)` other than `digest`, for the class-collision check: the `latest` version when
 * it is of this kind (one read), else any live one of this kind (an op and an object may share an id, and `latest`
 * then names the other kind). Every create passes the check, so all live versions of one kind share a class and any
 * one of them stands for all.
 */
async function liveVersionOfKind(
  project: string,
  objectId: string,
  kind: string,
  digest: string,
): Promise<ObjVersion | undefined> {
  const latest = await getAlias(project, objectId, 'latest')
  // Republishing the latest value: same digest, same value, same class.
  if (latest === undefined || latest === digest) return undefined
  const current = (await getObjVersion(project, objectId, latest, false))?.version
  if (current !== undefined && !current.deleted_at && current.kind === kind) return current
  const versions = await listObjectVersions(project, objectId, false)
  return versions.map((r) => r.version).find((v) => !v.deleted_at && v.kind === kind && v.digest !== digest)
}

/**
 * `obj/create`: stores a version once per `(project, object_id, digest)` (retries and concurrent creates of the same
 * value return the same digest and write nothing new), numbers it, and points `latest` at it.
 */
export async function createObj(
  principal: Principal,
  req: ObjCreateReq,
  rawBody?: string,
): Promise<{ digest: string; object_id: string }> {
  const o = req.obj
  // The project sits inside `obj`, out of reach of the validator's top-level project check.
  assertProjectAccess(principal, o.project_id)
  const sent = exactPart(rawBody, ['obj', 'val']) ?? o.val
  const val = processIncomingVal(sent, o.builtin_object_class ?? o.set_base_object_class ?? null)
  const dump = pythonDumps(val)
  const digest = bytesDigest(Buffer.from(dump, 'utf8'))
  if (o.expected_digest != null && o.expected_digest !== digest) {
    // Weave's `validate_expected_digest` with the label `obj {object_id!r}`.
    throw new ConflictError(`Client obj ${pyRepr(o.object_id)} digest ${o.expected_digest} != server digest ${digest}`)
  }
  const kind = objectKind(val)
  const { base, leaf } = objectClasses(val)
  const key = { project_id: o.project_id, object_id: o.object_id, digest, kind }
  // The counter is read before the claim is written, so a fresh version's first index draw needs no re-read of it.
  const [rival, counter] = await Promise.all([
    liveVersionOfKind(o.project_id, o.object_id, kind, digest),
    getIndexCounter(key),
    registerProject(o.project_id),
  ])
  if (rival !== undefined && rival.base_object_class !== base) {
    throw new BadRequestError(
      `Object name '${o.object_id}' is already used by an object of class ${rival.base_object_class ?? 'None'}; cannot create one of class ${base ?? 'None'}`,
    )
  }
  // Stored with its numbers as sent (`1.0`, big integers' digits), so a read answers what was hashed.
  const stored = jsonExact(val)
  const version: ObjVersion = {
    project_id: o.project_id,
    object_id: o.object_id,
    digest,
    kind,
    base_object_class: base,
    leaf_object_class: leaf,
    created_at: new Date().toISOString(),
    wb_user_id: principal.userId,
    // Weave's `length(val_dump)`, the bytes of `json.dumps(val)`: ASCII (`ensure_ascii`), and as long with its keys
    // sorted (the digest's dump, as the newest reference stores it) as in the value's order (older ones).
    size_bytes: dump.length,
    ...(stored.exact ? { val_exact: true } : {}),
  }
  const claim = await claimObjVersion(version, stored.text)
  if (claim.created) await assignVersionIndex(key, counter)
  else {
    if (claim.existing.deleted_at) await reviveVersion(claim.existing, version.created_at)
    // A version claimed by an attempt that stopped (or is still running) before its index: finish it here, so
    // `latest` never names a version that cannot be read.
    if (claim.existing.version_index === undefined) await assignVersionIndex(key)
  }
  // Republishing an existing value promotes it to latest.
  await putAlias(o.project_id, o.object_id, 'latest', digest)
  return { digest, object_id: o.object_id }
}

function newest(versions: ObjVersion[]): ObjVersion | undefined {
  return versions.reduce<ObjVersion | undefined>((best, v) => {
    if (best === undefined) return v
    const byTime = v.created_at.localeCompare(best.created_at)
    return byTime > 0 || (byTime === 0 && (v.version_index ?? 0) > (best.version_index ?? 0)) ? v : best
  }, undefined)
}

function pyList(values: readonly string[] | null | undefined): string {
  return values == null ? 'None' : `[${values.map(pyRepr).join(', ')}]`
}

// Python's repr of a set of strings (in request order: a Python set's order is its hash order).
const pySet = (values: readonly string[]) => (values.length === 0 ? 'set()' : `{${values.map(pyRepr).join(', ')}}`)

/**
 * Drops the tags and aliases of deleted versions and re-points `latest` when it names one (or is missing) to the
 * newest survivor. Conditional alias writes leave an alias alone that a concurrent request moved meanwhile.
 */
async function dropLabels(project: string, objectId: string, gone: Set<string>, all: ObjVersion[]): Promise<void> {
  const labels = await getObjectLabels(project, objectId)
  for (const a of labels.aliases) {
    if (a.alias !== 'latest' && gone.has(a.digest))
      await deleteAlias(project, objectId, a.alias, { ifDigest: a.digest })
  }
  for (const [digest, tags] of labels.tags) {
    if (gone.has(digest)) for (const t of tags) await deleteTag(project, objectId, digest, t)
  }
  const latest = labels.aliases.find((a) => a.alias === 'latest')
  if (latest !== undefined && !gone.has(latest.digest)) return
  const survivor = newest(all.filter((v) => !gone.has(v.digest) && v.version_index !== undefined))
  const options = latest === undefined ? {} : { ifDigest: latest.digest }
  if (survivor === undefined) await deleteAlias(project, objectId, 'latest', options)
  else await putAlias(project, objectId, 'latest', survivor.digest, options)
}

/**
 * `obj/delete`: soft-deletes versions, drops their tags and aliases and re-points `latest` to the newest survivor.
 * Targets already deleted take part in the cleanup too, so a retry finishes a delete that failed part-way (and then
 * answers 404 when it had nothing left to delete, as Weave does).
 */
export async function deleteObj(req: ObjDeleteReq) {
  const { project_id: project, object_id: objectId, digests } = req
  if (digests != null && digests.length > MAX_DELETE_DIGESTS) {
    throw new BadRequestError(
      `Object delete request contains ${digests.length} objects. Please delete ${MAX_DELETE_DIGESTS} or fewer objects at a time.`,
    )
  }
  const all = (await listObjectVersions(project, objectId, false)).map((r) => r.version)
  let targets: ObjVersion[]
  // Weave tests `if req.digests:`, so an empty list deletes every version as null does.
  if (digests == null || digests.length === 0) targets = all.filter((v) => v.version_index !== undefined)
  else {
    const resolved = await Promise.all(digests.map((d) => resolveObjVersion(project, objectId, d, false)))
    targets = [...new Map(resolved.flatMap((r) => (r ? [[r.version.digest, r.version]] : []))).values()]
    // The reference matches live versions only and refuses the whole request when the distinct digests given
    // (aliases counted as given) outnumber the versions found: nothing is deleted then.
    const found = new Set(targets.filter((v) => !v.deleted_at).map((v) => v.digest))
    const given = [...new Set(digests)]
    if (found.size > 0 && given.length !== found.size) {
      const diff = pySet(given.filter((d) => !found.has(d)))
      throw new NotFoundError(
        `Delete request contains ${digests.length} digests, but found ${found.size} objects to delete. Diff digests: ${diff}`,
      )
    }
  }
  const at = new Date().toISOString()
  const deleted: ObjVersion[] = []
  for (const v of targets) if (!v.deleted_at && (await markVersionDeleted(v, at))) deleted.push(v)
  const gone = new Set([...targets, ...all.filter((v) => v.deleted_at)].map((v) => v.digest))
  await dropLabels(project, objectId, gone, all)
  if (deleted.length === 0) throw new NotFoundError(`Object ${objectId} (${pyList(digests)}) not found when deleting.`)
  return {
    num_deleted: deleted.length,
    deleted_versions: deleted.map((v) => ({
      digest: v.digest,
      base_object_class: v.base_object_class,
      leaf_object_class: v.leaf_object_class,
    })),
  }
}
